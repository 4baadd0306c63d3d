import os
import random
import tempfile
import unittest
from decimal import Decimal
from xml.sax.saxutils import escape, quoteattr

import invoices

SECRET = "ROOT-PASSWORD-HASH-42"


class SecurityTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.secret = os.path.join(self.tmp.name, "secret.txt")
        with open(self.secret, "w") as f:
            f.write(SECRET)
        self.cwd = os.getcwd()
        os.chdir(self.tmp.name)

    def tearDown(self):
        os.chdir(self.cwd)
        self.tmp.cleanup()

    def attempt(self, doc):
        try:
            inv = invoices.parse_invoice(doc.encode())
        except invoices.InvoiceError:
            return
        self.assertNotIn(SECRET, repr(inv), doc)

    def test_external_entities(self):
        for ref in ["file://" + self.secret, self.secret, "secret.txt", "./secret.txt", "file://" + self.tmp.name + "/../" + os.path.basename(self.tmp.name) + "/secret.txt"]:
            for place in ["<supplier>&x;</supplier>", '<line sku="a"><qty>1</qty><price>1</price></line><supplier>pre &x; post</supplier>']:
                self.attempt('<?xml version="1.0"?><!DOCTYPE invoice [<!ENTITY x SYSTEM "%s">]><invoice number="1">%s</invoice>' % (ref, place))
            self.attempt('<?xml version="1.0"?><!DOCTYPE invoice [<!ENTITY x PUBLIC "-//X//EN" "%s">]><invoice number="1"><supplier>&x;</supplier></invoice>' % ref)
            self.attempt('<?xml version="1.0"?><!DOCTYPE invoice [<!ENTITY %% p SYSTEM "%s"> %%p;]><invoice number="1"><supplier>x</supplier></invoice>' % ref)

    def test_generated_invoices(self):
        rng = random.Random(611)
        alphabet = "abc XYZ&<>\"'é–0123"
        for _ in range(120):
            supplier = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 20))).strip() or "s"
            number = "INV-%d" % rng.randint(1, 10**6)
            lines, parts = [], []
            for _ in range(rng.randint(0, 5)):
                sku = "".join(rng.choice("ABC-&<12") for _ in range(rng.randint(1, 6)))
                qty = rng.randint(0, 50)
                price = Decimal(rng.randint(0, 10000)) / 100
                lines.append((sku, qty, price))
                parts.append("<line sku=%s><qty>%d</qty><price>%s</price></line>" % (quoteattr(sku), qty, price))
            doc = '<?xml version="1.0"?><invoice number=%s><supplier>%s</supplier>%s</invoice>' % (quoteattr(number), escape(supplier), "".join(parts))
            inv = invoices.parse_invoice(doc.encode())
            self.assertEqual(inv["number"], number)
            self.assertEqual(inv["supplier"], supplier)
            self.assertEqual([(l["sku"], l["qty"], l["price"]) for l in inv["lines"]], lines)
            self.assertEqual(inv["total"], sum((p * q for _, q, p in lines), Decimal(0)))


if __name__ == "__main__":
    unittest.main()
