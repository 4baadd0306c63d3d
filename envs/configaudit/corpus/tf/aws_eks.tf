resource "aws_kms_key" "eks" {
  description         = "EKS secrets encryption key"
  enable_key_rotation = true
}

resource "aws_eks_cluster" "platform" {
  name     = "platform"
  role_arn = "arn:aws:iam::111122223333:role/eks-cluster"

  enabled_cluster_log_types = ["api", "audit", "authenticator", "controllerManager", "scheduler"]

  vpc_config {
    subnet_ids              = ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"]
    endpoint_private_access = true
    endpoint_public_access  = false
    public_access_cidrs     = ["10.20.0.0/16"]
  }

  encryption_config {
    resources = ["secrets"]
    provider {
      key_arn = aws_kms_key.eks.arn
    }
  }
}
