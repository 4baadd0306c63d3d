resource "aws_kms_key" "db" {
  description         = "Orders database encryption key"
  enable_key_rotation = true
}

resource "aws_db_instance" "orders" {
  identifier                          = "orders"
  engine                              = "postgres"
  engine_version                      = "16.3"
  instance_class                      = "db.t4g.medium"
  allocated_storage                   = 50
  username                            = "orders_admin"
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
  final_snapshot_identifier           = "orders-final"
}
