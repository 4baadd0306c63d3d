resource "google_storage_bucket" "exports" {
  name                        = "acme-data-exports"
  location                    = "EU"
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"

  versioning {
    enabled = true
  }

  encryption {
    default_kms_key_name = "projects/acme/locations/eu/keyRings/data/cryptoKeys/exports"
  }
}

resource "google_storage_bucket_iam_member" "exports_reader" {
  bucket = google_storage_bucket.exports.name
  role   = "roles/storage.objectViewer"
  member = "group:analysts@example.com"
}
