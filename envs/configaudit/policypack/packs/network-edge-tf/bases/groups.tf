resource "aws_security_group" "edge" {
  name        = "{{service}}-edge"
  description = "Load balancer in front of {{service}}"
  vpc_id      = "{{vpc}}"

  ingress {
    description = "HTTPS from the internal network"
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }

  egress {
    description = "HTTPS to the internal services"
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }

  tags = {
    owner = "{{team}}"
    tier  = "edge"
  }
}

resource "aws_security_group" "app" {
  name        = "{{service}}-app"
  description = "{{service}} application servers"
  vpc_id      = "{{vpc}}"

  ingress {
    description = "Traffic from the load balancer"
    from_port   = 8080
    to_port     = 8080
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }

  ingress {
    description = "SSH from the corporate VPN"
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["10.20.0.0/16"]
  }

  egress {
    description = "PostgreSQL in the data tier"
    from_port   = 5432
    to_port     = 5432
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }

  tags = {
    owner = "{{team}}"
    tier  = "app"
  }
}
