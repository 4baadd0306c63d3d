resource "aws_kms_key" "data" {
  description             = "{{app}} data encryption key"
  enable_key_rotation     = true
  deletion_window_in_days = 30
  multi_region            = true

  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "AccountAdministration"
        Effect    = "Allow"
        Principal = { AWS = "arn:aws:iam::{{account}}:root" }
        Action    = "kms:*"
        Resource  = "*"
      },
      {
        Sid       = "ServiceUse"
        Effect    = "Allow"
        Principal = { AWS = "arn:aws:iam::{{account}}:role/{{app}}-service" }
        Action    = ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey*"]
        Resource  = "*"
      }
    ]
  })

  tags = {
    owner        = "{{team}}"
    "data-class" = "confidential"
    dr           = "true"
  }
}

resource "aws_kms_alias" "data" {
  name          = "alias/{{team}}/{{app}}-data"
  target_key_id = aws_kms_key.data.key_id
}

resource "aws_kms_key" "ci" {
  description             = "{{app}} CI fixtures key"
  enable_key_rotation     = true
  deletion_window_in_days = 7

  tags = {
    owner        = "{{team}}"
    "data-class" = "test"
    lifecycle    = "ephemeral"
  }
}

resource "aws_kms_alias" "ci" {
  name          = "alias/{{team}}/{{app}}-ci"
  target_key_id = aws_kms_key.ci.key_id
}
