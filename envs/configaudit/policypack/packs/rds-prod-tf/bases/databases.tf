resource "aws_kms_key" "db" {
  description             = "{{service}} database encryption key"
  enable_key_rotation     = true
  deletion_window_in_days = 30
}

resource "aws_db_instance" "primary" {
  identifier                          = "{{service}}-prod"
  engine                              = "{{engine}}"
  engine_version                      = "{{version}}"
  instance_class                      = "db.r6g.large"
  allocated_storage                   = 200
  username                            = "{{service}}_admin"
  manage_master_user_password         = true
  db_subnet_group_name                = "private-db"
  publicly_accessible                 = false
  storage_encrypted                   = true
  kms_key_id                          = aws_kms_key.db.arn
  backup_retention_period             = 14
  deletion_protection                 = true
  iam_database_authentication_enabled = true
  performance_insights_enabled        = true
  performance_insights_kms_key_id     = aws_kms_key.db.arn
  skip_final_snapshot                 = false
  final_snapshot_identifier           = "{{service}}-prod-final"

  tags = {
    env   = "prod"
    owner = "{{team}}"
  }
}

resource "aws_db_instance" "scratch" {
  identifier                          = "{{service}}-dev"
  engine                              = "{{engine}}"
  engine_version                      = "{{version}}"
  instance_class                      = "db.t4g.small"
  allocated_storage                   = 20
  username                            = "{{service}}_dev"
  manage_master_user_password         = true
  db_subnet_group_name                = "private-db"
  publicly_accessible                 = false
  storage_encrypted                   = true
  kms_key_id                          = aws_kms_key.db.arn
  backup_retention_period             = 3
  deletion_protection                 = true
  iam_database_authentication_enabled = true
  performance_insights_enabled        = true
  performance_insights_kms_key_id     = aws_kms_key.db.arn
  skip_final_snapshot                 = true

  tags = {
    env   = "dev"
    owner = "{{team}}"
  }
}
