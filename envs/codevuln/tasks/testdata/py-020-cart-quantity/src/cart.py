"""Shopping cart for the web shop."""


class CartError(ValueError):
    pass


class Cart:
    def __init__(self, catalog):
        self.catalog = dict(catalog)
        self.lines = {}
        self.coupons = []

    def add(self, sku, qty):
        qty = float(qty)
        self.lines[sku] = self.lines.get(sku, 0) + qty

    def set_quantity(self, sku, qty):
        qty = float(qty)
        if qty == 0:
            self.lines.pop(sku, None)
        else:
            self.lines[sku] = qty

    def apply_coupon(self, code, coupons):
        if code not in coupons:
            raise CartError("unknown coupon")
        self.coupons.append(coupons[code])

    def total(self):
        subtotal = sum(self.catalog.get(sku, 0) * qty for sku, qty in self.lines.items())
        for pct in self.coupons:
            subtotal -= subtotal * pct / 100
        return int(round(subtotal))
