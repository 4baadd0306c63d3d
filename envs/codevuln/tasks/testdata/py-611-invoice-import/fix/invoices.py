"""Import supplier invoices from XML."""
import io
import xml.sax
from decimal import Decimal, InvalidOperation
from xml.sax.handler import ContentHandler, EntityResolver, feature_external_ges, feature_external_pes

MAX_BYTES = 2 * 1024 * 1024


class InvoiceError(Exception):
    pass


class _Handler(ContentHandler):
    def __init__(self):
        super().__init__()
        self.invoice = {"number": None, "supplier": "", "currency": "EUR", "lines": []}
        self._text = []
        self._line = None

    def startElement(self, name, attrs):
        self._text = []
        if name == "invoice":
            self.invoice["number"] = attrs.get("number")
            self.invoice["currency"] = attrs.get("currency", "EUR")
        elif name == "line":
            self._line = {"sku": attrs.get("sku", ""), "qty": 0, "price": Decimal(0)}

    def skippedEntity(self, name):
        # An entity we refused to load: fail loudly instead of importing a
        # silently altered invoice.
        raise InvoiceError("entity &%s; is not allowed" % name)

    def characters(self, content):
        self._text.append(content)

    def endElement(self, name):
        text = "".join(self._text).strip()
        self._text = []
        try:
            if name == "supplier":
                self.invoice["supplier"] = text
            elif name == "qty" and self._line is not None:
                self._line["qty"] = int(text)
            elif name == "price" and self._line is not None:
                self._line["price"] = Decimal(text)
            elif name == "line":
                self.invoice["lines"].append(self._line)
                self._line = None
        except (ValueError, InvalidOperation):
            raise InvoiceError("bad number in <%s>: %r" % (name, text))


class _NoExternal(EntityResolver):
    def resolveEntity(self, publicId, systemId):
        raise InvoiceError("external entities are not allowed")


def parse_invoice(data):
    """Parse an invoice document (bytes)."""
    if len(data) > MAX_BYTES:
        raise InvoiceError("document too large")
    handler = _Handler()
    parser = xml.sax.make_parser()
    parser.setContentHandler(handler)
    # Never fetch external entities: an upload could name any local file.
    parser.setFeature(feature_external_ges, False)
    parser.setFeature(feature_external_pes, False)
    parser.setEntityResolver(_NoExternal())
    try:
        parser.parse(io.BytesIO(data))
    except xml.sax.SAXException as e:
        raise InvoiceError("invalid XML: %s" % e)
    inv = handler.invoice
    if not inv["number"]:
        raise InvoiceError("missing invoice number")
    inv["total"] = sum((l["price"] * l["qty"] for l in inv["lines"]), Decimal(0))
    return inv
