resource "aws_kms_key" "records" {
  description             = "{{org}} records bucket key"
  enable_key_rotation     = true
  deletion_window_in_days = 30
}

resource "aws_kms_key" "assets" {
  description             = "{{org}} assets bucket key"
  enable_key_rotation     = true
  deletion_window_in_days = 30
}

resource "aws_s3_bucket" "assets" {
  bucket = "{{org}}-public-assets"

  tags = {
    "data-class" = "public"
    "owner"      = "web@{{org}}.example"
  }
}

resource "aws_s3_bucket_public_access_block" "assets" {
  bucket                  = aws_s3_bucket.assets.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_acl" "assets" {
  bucket = aws_s3_bucket.assets.id
  acl    = "private"
}

resource "aws_s3_bucket_versioning" "assets" {
  bucket = aws_s3_bucket.assets.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "assets" {
  bucket = aws_s3_bucket.assets.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.assets.arn
    }
  }
}

resource "aws_s3_bucket" "records" {
  bucket = "{{org}}-{{dataset}}-records"

  tags = {
    "data-class" = "confidential"
    "owner"      = "{{team}}@{{org}}.example"
  }
}

resource "aws_s3_bucket_public_access_block" "records" {
  bucket                  = aws_s3_bucket.records.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_acl" "records" {
  bucket = aws_s3_bucket.records.id
  acl    = "private"
}

resource "aws_s3_bucket_versioning" "records" {
  bucket = aws_s3_bucket.records.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "records" {
  bucket = aws_s3_bucket.records.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = aws_kms_key.records.arn
    }
  }
}

resource "aws_s3_bucket_logging" "records" {
  bucket        = aws_s3_bucket.records.id
  target_bucket = "{{org}}-access-logs"
  target_prefix = "records/"
}
