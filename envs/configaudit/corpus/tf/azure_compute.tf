resource "azurerm_linux_virtual_machine" "jump" {
  name                            = "jump-host"
  resource_group_name             = "rg-ops"
  location                        = "westeurope"
  size                            = "Standard_B2s"
  admin_username                  = "opsadmin"
  disable_password_authentication = true
  network_interface_ids           = ["/subscriptions/0000/resourceGroups/rg-ops/providers/Microsoft.Network/networkInterfaces/jump"]

  admin_ssh_key {
    username   = "opsadmin"
    public_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBvGvCq0qVhS2S1lJ4l5Yb2H9QxP2d0m8wGQ9b2xJk6n ops@example.com"
  }

  os_disk {
    caching              = "ReadWrite"
    storage_account_type = "Premium_LRS"
  }

  source_image_reference {
    publisher = "Canonical"
    offer     = "ubuntu-24_04-lts"
    sku       = "server"
    version   = "latest"
  }
}

resource "azurerm_network_security_group" "jump" {
  name                = "jump-nsg"
  location            = "westeurope"
  resource_group_name = "rg-ops"

  security_rule {
    name                       = "ssh-from-vpn"
    priority                   = 100
    direction                  = "Inbound"
    access                     = "Allow"
    protocol                   = "Tcp"
    source_port_range          = "*"
    destination_port_range     = "22"
    source_address_prefix      = "10.20.0.0/16"
    destination_address_prefix = "*"
  }
}
