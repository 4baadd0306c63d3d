resource "aws_s3_bucket" "logs" {
  bucket = "svbench-logs"
  acl    = "public-read"
}

resource "aws_security_group" "admin" {
  name = "admin"

  ingress {
    from_port   = 3389
    to_port     = 3389
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}

resource "aws_iam_policy" "admin" {
  name = "admin"
  policy = jsonencode({
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "*", Resource = "*" }]
  })
}

resource "aws_db_instance" "db" {
  engine              = "postgres"
  instance_class      = "db.t3.micro"
  publicly_accessible = true
}

resource "aws_ebs_volume" "data" {
  availability_zone = "eu-west-1a"
  size              = 10
}

resource "google_storage_bucket" "assets" {
  name     = "assets"
  location = "EU"
}

resource "azurerm_storage_account" "sa" {
  name                      = "sa"
  enable_https_traffic_only = false
}
