import unittest
from decimal import Decimal

import invoices

DOC = b"""<?xml version="1.0" encoding="UTF-8"?>
<invoice number="INV-7" currency="USD">
  <supplier>Smith &amp; Sons &#8211; Tools</supplier>
  <line sku="HAM-1"><qty>2</qty><price>9.50</price></line>
  <line sku="NAIL-100"><qty>10</qty><price>0.25</price></line>
</invoice>"""


class BehaviourTest(unittest.TestCase):
    def test_parse(self):
        inv = invoices.parse_invoice(DOC)
        self.assertEqual(inv["number"], "INV-7")
        self.assertEqual(inv["currency"], "USD")
        self.assertEqual(inv["supplier"], "Smith & Sons \u2013 Tools")
        self.assertEqual([l["sku"] for l in inv["lines"]], ["HAM-1", "NAIL-100"])
        self.assertEqual(inv["total"], Decimal("21.50"))

    def test_errors(self):
        for bad in [b"<invoice>", b"<invoice><supplier>x</supplier></invoice>",
                    b'<invoice number="1"><line><qty>two</qty></line></invoice>']:
            with self.assertRaises(invoices.InvoiceError):
                invoices.parse_invoice(bad)


if __name__ == "__main__":
    unittest.main()
