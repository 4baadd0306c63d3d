# Relational database policy (pack rds-prod-tf).
package svbench.policypack

import rego.v1

dbs := object.get(input, ["resource", "aws_db_instance"], {})

v(clause, name, msg) := {"clause": clause, "object": sprintf("aws_db_instance.%s", [name]), "msg": msg}

env(db) := object.get(db, ["tags", "env"], "")

prod(db) if env(db) == "prod"

violations contains v("DB-ENV-TAG", name, sprintf("instance %s has env tag %q", [name, env(db)])) if {
	some name, db in dbs
	not env(db) in {"prod", "staging", "dev"}
}

violations contains v("DB-DELETION-PROTECTION", name, sprintf("production instance %s does not set deletion_protection = true", [name])) if {
	some name, db in dbs
	prod(db)
	object.get(db, "deletion_protection", false) != true
}

min_retention(db) := 7 if prod(db)

min_retention(db) := 1 if not prod(db)

# Retention that is not a literal number (a variable) cannot be shown to
# meet the minimum.
violations contains v("DB-BACKUP-RETENTION", name, sprintf("instance %s keeps backups %v day(s), %v required", [name, days, min_retention(db)])) if {
	some name, db in dbs
	days := object.get(db, "backup_retention_period", 0)
	not retention_ok(days, min_retention(db))
}

retention_ok(days, need) if {
	is_number(days)
	days >= need
}

violations contains v("DB-ENCRYPTED", name, sprintf("instance %s does not encrypt its storage", [name])) if {
	some name, db in dbs
	object.get(db, "storage_encrypted", false) != true
}

violations contains v("DB-PRIVATE", name, sprintf("instance %s is publicly accessible", [name])) if {
	some name, db in dbs
	db.publicly_accessible == true
}

violations contains v("DB-FINAL-SNAPSHOT", name, sprintf("production instance %s skips its final snapshot", [name])) if {
	some name, db in dbs
	prod(db)
	db.skip_final_snapshot == true
}

violations contains v("DB-FINAL-SNAPSHOT", name, sprintf("production instance %s names no final_snapshot_identifier", [name])) if {
	some name, db in dbs
	prod(db)
	object.get(db, "final_snapshot_identifier", "") == ""
}

violations contains v("DB-IAM-AUTH", name, sprintf("production instance %s does not enable IAM database authentication", [name])) if {
	some name, db in dbs
	prod(db)
	object.get(db, "iam_database_authentication_enabled", false) != true
}
