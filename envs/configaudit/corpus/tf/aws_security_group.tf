resource "aws_security_group" "bastion" {
  name        = "bastion"
  description = "Bastion host access from the corporate VPN"
  vpc_id      = "vpc-0a1b2c3d4e5f67890"

  ingress {
    description = "SSH from the VPN range"
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["10.20.0.0/16"]
  }

  ingress {
    description = "RDP from the VPN range"
    from_port   = 3389
    to_port     = 3389
    protocol    = "tcp"
    cidr_blocks = ["10.20.0.0/16"]
  }

  egress {
    description = "HTTPS to the internal proxy"
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }
}
