package configaudit

import "strings"

// iamActionCatalogue lists the actions of the services E2's policies use,
// so that a pattern can be expanded into what it grants: "s3:A*" … "s3:Z*"
// is every S3 action, which is "s3:*". It is not AWS's whole list; an
// action it lacks is one a pattern cannot be shown to cover, so a gap
// makes the comparison stricter, never looser.
var iamActionCatalogue = map[string][]string{
	"s3": strings.Fields(`AbortMultipartUpload BypassGovernanceRetention CreateAccessPoint
		CreateAccessPointForObjectLambda CreateBucket CreateJob CreateMultiRegionAccessPoint DeleteAccessPoint
		DeleteAccessPointForObjectLambda DeleteAccessPointPolicy DeleteBucket DeleteBucketOwnershipControls
		DeleteBucketPolicy DeleteBucketWebsite DeleteJobTagging DeleteObject DeleteObjectTagging DeleteObjectVersion
		DeleteObjectVersionTagging DeleteStorageLensConfiguration DescribeJob DescribeMultiRegionAccessPointOperation
		GetAccelerateConfiguration GetAccessPoint GetAccessPointPolicy GetAccountPublicAccessBlock
		GetAnalyticsConfiguration GetBucketAcl GetBucketCORS GetBucketLocation GetBucketLogging GetBucketNotification
		GetBucketObjectLockConfiguration GetBucketOwnershipControls GetBucketPolicy GetBucketPolicyStatus
		GetBucketPublicAccessBlock GetBucketRequestPayment GetBucketTagging GetBucketVersioning GetBucketWebsite
		GetEncryptionConfiguration GetIntelligentTieringConfiguration GetInventoryConfiguration GetJobTagging
		GetLifecycleConfiguration GetMetricsConfiguration GetObject GetObjectAcl GetObjectAttributes GetObjectLegalHold
		GetObjectRetention GetObjectTagging GetObjectTorrent GetObjectVersion GetObjectVersionAcl
		GetObjectVersionAttributes GetObjectVersionTagging GetReplicationConfiguration GetStorageLensConfiguration
		InitiateReplication ListAccessPoints ListAllMyBuckets ListBucket ListBucketMultipartUploads ListBucketVersions
		ListJobs ListMultipartUploadParts ListStorageLensConfigurations ObjectOwnerOverrideToBucketOwner
		PutAccelerateConfiguration PutAccessPointPolicy PutAccountPublicAccessBlock PutAnalyticsConfiguration
		PutBucketAcl PutBucketCORS PutBucketLogging PutBucketNotification PutBucketObjectLockConfiguration
		PutBucketOwnershipControls PutBucketPolicy PutBucketPublicAccessBlock PutBucketRequestPayment PutBucketTagging
		PutBucketVersioning PutBucketWebsite PutEncryptionConfiguration PutIntelligentTieringConfiguration
		PutInventoryConfiguration PutJobTagging PutLifecycleConfiguration PutMetricsConfiguration PutObject
		PutObjectAcl PutObjectLegalHold PutObjectRetention PutObjectTagging PutObjectVersionAcl PutObjectVersionTagging
		PutReplicationConfiguration PutStorageLensConfiguration ReplicateDelete ReplicateObject ReplicateTags
		RestoreObject UpdateJobPriority UpdateJobStatus`),
	"iam": strings.Fields(`AddRoleToInstanceProfile AddUserToGroup AttachGroupPolicy AttachRolePolicy
		AttachUserPolicy CreateAccessKey CreateGroup CreateInstanceProfile CreateLoginProfile CreatePolicy
		CreatePolicyVersion CreateRole CreateServiceLinkedRole CreateUser DeleteAccessKey DeleteGroup DeletePolicy
		DeleteRole DeleteRolePolicy DeleteUser DeleteUserPolicy DetachGroupPolicy DetachRolePolicy DetachUserPolicy
		GetAccountAuthorizationDetails GetGroup GetPolicy GetPolicyVersion GetRole GetRolePolicy GetUser GetUserPolicy
		ListAttachedRolePolicies ListGroups ListPolicies ListRoles ListUsers PassRole PutGroupPolicy PutRolePolicy
		PutUserPolicy SetDefaultPolicyVersion TagRole TagUser UpdateAssumeRolePolicy UpdateLoginProfile UpdateRole`),
	"kms": strings.Fields(`CancelKeyDeletion CreateAlias CreateGrant CreateKey Decrypt DeleteAlias DescribeKey
		DisableKey DisableKeyRotation EnableKey EnableKeyRotation Encrypt GenerateDataKey GenerateDataKeyPair
		GenerateDataKeyWithoutPlaintext GetKeyPolicy GetKeyRotationStatus GetPublicKey ListAliases ListGrants
		ListKeyPolicies ListKeys PutKeyPolicy ReEncryptFrom ReEncryptTo RetireGrant RevokeGrant ScheduleKeyDeletion
		Sign TagResource UntagResource UpdateAlias UpdateKeyDescription Verify`),
	"sts": strings.Fields(`AssumeRole AssumeRoleWithSAML AssumeRoleWithWebIdentity DecodeAuthorizationMessage
		GetAccessKeyInfo GetCallerIdentity GetFederationToken GetSessionToken SetSourceIdentity TagSession`),
}

// managedPolicy is an AWS-managed policy's Allow statements, written down
// from AWS's published documents to the precision growth needs: an Allow
// of everything but a few services (PowerUserAccess) is "*", which is what
// it grants for any comparison a patch could win.
type managedPolicy struct{ actions []string }

var awsManagedPolicies = map[string]managedPolicy{
	"AdministratorAccess":                {[]string{"*"}},
	"PowerUserAccess":                    {[]string{"*"}},
	"IAMFullAccess":                      {[]string{"iam:*", "organizations:DescribeAccount", "organizations:DescribeOrganization", "organizations:DescribeOrganizationalUnit", "organizations:DescribePolicy", "organizations:ListChildren", "organizations:ListParents", "organizations:ListPoliciesForTarget", "organizations:ListRoots", "organizations:ListPolicies", "organizations:ListTargetsForPolicy"}},
	"IAMReadOnlyAccess":                  {[]string{"iam:GenerateCredentialReport", "iam:GenerateServiceLastAccessedDetails", "iam:Get*", "iam:List*", "iam:SimulateCustomPolicy", "iam:SimulatePrincipalPolicy"}},
	"AmazonS3FullAccess":                 {[]string{"s3:*", "s3-object-lambda:*"}},
	"AmazonS3ReadOnlyAccess":             {[]string{"s3:Get*", "s3:List*", "s3:Describe*", "s3-object-lambda:Get*", "s3-object-lambda:List*"}},
	"ReadOnlyAccess":                     {[]string{"*:Get*", "*:List*", "*:Describe*", "*:BatchGet*", "*:Query", "*:Scan", "*:Search*", "*:Lookup*", "*:View*"}},
	"AmazonEC2FullAccess":                {[]string{"ec2:*", "elasticloadbalancing:*", "cloudwatch:*", "autoscaling:*", "iam:CreateServiceLinkedRole"}},
	"AmazonEC2ReadOnlyAccess":            {[]string{"ec2:Describe*", "elasticloadbalancing:Describe*", "cloudwatch:ListMetrics", "cloudwatch:GetMetricStatistics", "cloudwatch:Describe*", "autoscaling:Describe*"}},
	"AmazonRDSFullAccess":                {[]string{"rds:*", "application-autoscaling:*", "cloudwatch:*", "ec2:Describe*", "sns:*", "logs:*", "iam:CreateServiceLinkedRole"}},
	"AmazonDynamoDBFullAccess":           {[]string{"dynamodb:*", "dax:*", "application-autoscaling:*", "cloudwatch:*", "iam:PassRole", "iam:GetRole", "iam:ListRoles", "sns:*", "lambda:*", "kms:DescribeKey", "kms:ListAliases"}},
	"SecretsManagerReadWrite":            {[]string{"secretsmanager:*", "cloudformation:*", "ec2:Describe*", "kms:DescribeKey", "kms:ListAliases", "kms:ListKeys", "lambda:*", "rds:Describe*", "tag:GetResources"}},
	"AWSLambda_FullAccess":               {[]string{"lambda:*", "cloudformation:*", "cloudwatch:*", "logs:*", "iam:PassRole", "iam:GetRole", "iam:ListRoles", "s3:*", "sns:*", "sqs:*", "kms:ListAliases", "xray:*", "states:*", "tag:GetResources"}},
	"CloudWatchLogsFullAccess":           {[]string{"logs:*", "cloudwatch:GenerateQuery"}},
	"CloudWatchAgentServerPolicy":        {[]string{"cloudwatch:PutMetricData", "ec2:DescribeVolumes", "ec2:DescribeTags", "logs:PutLogEvents", "logs:DescribeLogStreams", "logs:DescribeLogGroups", "logs:CreateLogStream", "logs:CreateLogGroup", "ssm:GetParameter"}},
	"AmazonSSMFullAccess":                {[]string{"ssm:*", "ec2messages:*", "ssmmessages:*", "cloudwatch:*", "ec2:Describe*", "iam:ListRoles", "iam:PassRole", "ds:*", "logs:*"}},
	"AmazonSSMManagedInstanceCore":       {[]string{"ssm:DescribeAssociation", "ssm:GetDeployablePatchSnapshotForInstance", "ssm:GetDocument", "ssm:DescribeDocument", "ssm:GetManifest", "ssm:GetParameter", "ssm:GetParameters", "ssm:ListAssociations", "ssm:ListInstanceAssociations", "ssm:PutInventory", "ssm:PutComplianceItems", "ssm:PutConfigurePackageResult", "ssm:UpdateAssociationStatus", "ssm:UpdateInstanceAssociationStatus", "ssm:UpdateInstanceInformation", "ssmmessages:*", "ec2messages:*"}},
	"AmazonEKSClusterPolicy":             {[]string{"autoscaling:Describe*", "autoscaling:UpdateAutoScalingGroup", "ec2:*", "elasticloadbalancing:*", "iam:CreateServiceLinkedRole", "kms:CreateGrant", "kms:DescribeKey"}},
	"AmazonEKSWorkerNodePolicy":          {[]string{"ec2:Describe*", "eks:DescribeCluster", "eks-auth:AssumeRoleForPodIdentity"}},
	"AmazonEKS_CNI_Policy":               {[]string{"ec2:AssignPrivateIpAddresses", "ec2:AttachNetworkInterface", "ec2:CreateNetworkInterface", "ec2:DeleteNetworkInterface", "ec2:Describe*", "ec2:DetachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:UnassignPrivateIpAddresses", "ec2:AssignIpv6Addresses", "ec2:CreateTags"}},
	"AmazonEC2ContainerRegistryReadOnly": {[]string{"ecr:GetAuthorizationToken", "ecr:BatchCheckLayerAvailability", "ecr:GetDownloadUrlForLayer", "ecr:GetRepositoryPolicy", "ecr:DescribeRepositories", "ecr:ListImages", "ecr:DescribeImages", "ecr:BatchGetImage", "ecr:GetLifecyclePolicy", "ecr:GetLifecyclePolicyPreview", "ecr:ListTagsForResource", "ecr:DescribeImageScanFindings"}},
}

// managedPolicyActions resolves an AWS-managed policy ARN; false for any
// other ARN. An AWS-managed policy missing from the catalogue grants "*":
// svbench cannot tell what it grants, so it fails closed.
func managedPolicyActions(arn string) ([]string, bool) {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "iam" || parts[4] != "aws" || !strings.HasPrefix(parts[5], "policy/") {
		return nil, false
	}
	name := parts[5][strings.LastIndexByte(parts[5], '/')+1:]
	if p, ok := awsManagedPolicies[name]; ok {
		return p.actions, true
	}
	return []string{"*"}, true
}
