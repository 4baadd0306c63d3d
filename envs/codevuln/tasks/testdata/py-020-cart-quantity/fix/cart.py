"""Shopping cart for the web shop."""

MAX_QTY = 99


class CartError(ValueError):
    pass


def _quantity(qty, allow_zero=False):
    # Accept ints and decimal-digit strings only: no floats, bools, signs,
    # exponents or whitespace tricks.
    if isinstance(qty, bool):
        raise CartError("invalid quantity")
    if isinstance(qty, int):
        n = qty
    elif isinstance(qty, str) and qty.isascii() and qty.isdigit():
        n = int(qty)
    else:
        raise CartError("invalid quantity")
    if n < (0 if allow_zero else 1) or n > MAX_QTY:
        raise CartError("quantity out of range")
    return n


class Cart:
    def __init__(self, catalog):
        self.catalog = dict(catalog)
        self.lines = {}
        self.coupons = []

    def _sku(self, sku):
        if sku not in self.catalog:
            raise CartError("unknown product")
        return sku

    def add(self, sku, qty):
        sku, qty = self._sku(sku), _quantity(qty)
        new = self.lines.get(sku, 0) + qty
        if new > MAX_QTY:
            raise CartError("quantity out of range")
        self.lines[sku] = new

    def set_quantity(self, sku, qty):
        sku, qty = self._sku(sku), _quantity(qty, allow_zero=True)
        if qty == 0:
            self.lines.pop(sku, None)
        else:
            self.lines[sku] = qty

    def apply_coupon(self, code, coupons):
        if code not in coupons:
            raise CartError("unknown coupon")
        if self.coupons:
            raise CartError("only one coupon per order")
        pct = coupons[code]
        if isinstance(pct, bool) or not isinstance(pct, int) or not 1 <= pct <= 100:
            raise CartError("invalid coupon")
        self.coupons.append(pct)

    def total(self):
        subtotal = sum(self.catalog[sku] * qty for sku, qty in self.lines.items())
        for pct in self.coupons:
            subtotal -= subtotal * pct / 100
        return max(0, int(round(subtotal)))
