resource "aws_s3_bucket" "logs" {
  bucket = "svbench-logs"
  acl    = "public-read"
}

resource "aws_security_group" "ssh" {
  name        = "ssh"
  description = "ssh from anywhere"

  ingress {
    description = "ssh"
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
