variable "log_bucket" {
  type = string
}

resource "aws_s3_bucket" "data" {
  bucket = "svbench-data"
}

resource "aws_s3_bucket_public_access_block" "data" {
  bucket                  = aws_s3_bucket.data.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_logging" "data" {
  bucket        = aws_s3_bucket.data.id
  target_bucket = var.log_bucket
  target_prefix = "data/"
}

resource "aws_security_group" "web" {
  name = "web"

  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

resource "aws_db_instance" "db" {
  engine              = "postgres"
  instance_class      = "db.t3.micro"
  publicly_accessible = false
  storage_encrypted   = true
}

resource "aws_ebs_volume" "data" {
  availability_zone = "eu-west-1a"
  size              = 10
  encrypted         = true
}

resource "google_storage_bucket" "assets" {
  name                        = "assets"
  location                    = "EU"
  uniform_bucket_level_access = true
}

resource "azurerm_storage_account" "sa" {
  name                       = "sa"
  https_traffic_only_enabled = true
}
