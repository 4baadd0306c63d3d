resource "google_compute_instance" "app" {
  name         = "app-server"
  machine_type = "e2-standard-2"
  zone         = "europe-west1-b"

  boot_disk {
    kms_key_self_link = "projects/acme/locations/europe-west1/keyRings/vm/cryptoKeys/boot"
    initialize_params {
      image = "debian-cloud/debian-12"
    }
  }

  network_interface {
    subnetwork = "projects/acme/regions/europe-west1/subnetworks/private"
  }

  metadata = {
    block-project-ssh-keys = "true"
    serial-port-enable     = "false"
    enable-oslogin         = "true"
  }

  shielded_instance_config {
    enable_secure_boot          = true
    enable_vtpm                 = true
    enable_integrity_monitoring = true
  }

  service_account {
    email  = "app-server@acme.iam.gserviceaccount.com"
    scopes = ["cloud-platform"]
  }
}

resource "google_compute_firewall" "app_https" {
  name          = "app-https"
  network       = "private"
  direction     = "INGRESS"
  source_ranges = ["10.10.0.0/16"]

  allow {
    protocol = "tcp"
    ports    = ["443"]
  }
}
