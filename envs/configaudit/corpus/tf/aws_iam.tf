data "aws_iam_policy_document" "reports_reader" {
  statement {
    sid       = "ReadReports"
    effect    = "Allow"
    actions   = ["s3:GetObject", "s3:ListBucket"]
    resources = ["arn:aws:s3:::acme-reports", "arn:aws:s3:::acme-reports/*"]
  }
}

resource "aws_iam_policy" "reports_reader" {
  name        = "reports-reader"
  description = "Read access to the reports bucket"
  policy      = data.aws_iam_policy_document.reports_reader.json
}

data "aws_iam_policy_document" "assume_ec2" {
  statement {
    effect  = "Allow"
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "reports" {
  name               = "reports"
  assume_role_policy = data.aws_iam_policy_document.assume_ec2.json
}

resource "aws_iam_role_policy_attachment" "reports" {
  role       = aws_iam_role.reports.name
  policy_arn = aws_iam_policy.reports_reader.arn
}
