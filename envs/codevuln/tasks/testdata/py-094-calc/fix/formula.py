"""Spreadsheet formula evaluation."""
import ast
import operator
import re

CELL = re.compile(r"\b([A-Z]{1,2}[0-9]{1,4})\b")
FUNCTIONS = {"min": min, "max": max, "abs": abs, "round": round}
BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
UNARY = {ast.USub: operator.neg, ast.UAdd: operator.pos}
MAX_LEN = 500
MAX_EXPONENT = 100


class FormulaError(Exception):
    pass


def evaluate(formula, cells):
    """Evaluate '=expr'; cells maps references like 'A1' to numbers."""
    if not formula.startswith("="):
        raise FormulaError("formula must start with '='")
    expr = formula[1:].strip()
    if not expr:
        raise FormulaError("empty formula")
    if len(expr) > MAX_LEN:
        raise FormulaError("formula too long")
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as e:
        raise FormulaError("invalid formula: %s" % e.msg)
    try:
        result = _eval(tree.body, cells)
    except ZeroDivisionError:
        raise FormulaError("division by zero")
    except (OverflowError, TypeError, ValueError) as e:
        raise FormulaError("invalid formula: %s" % e)
    if not isinstance(result, (int, float)) or isinstance(result, bool):
        raise FormulaError("formula did not produce a number")
    return result


def _eval(node, cells):
    # Walk an explicit allow-list of node types; anything else is refused, so
    # attribute access, subscripts, lambdas and names other than cells cannot run.
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in BINOPS:
        left, right = _eval(node.left, cells), _eval(node.right, cells)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise FormulaError("exponent too large")
        return BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return UNARY[type(node.op)](_eval(node.operand, cells))
    if isinstance(node, ast.Name):
        if CELL.fullmatch(node.id):
            value = cells.get(node.id)
            if value is None:
                raise FormulaError("unknown cell " + node.id)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise FormulaError("cell %s is not a number" % node.id)
            return value
        raise FormulaError("unknown name " + node.id)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in FUNCTIONS and not node.keywords and node.args):
        args = [_eval(a, cells) for a in node.args]
        if node.func.id == "round" and len(args) > 2:
            raise FormulaError("round takes at most 2 arguments")
        return FUNCTIONS[node.func.id](*args)
    raise FormulaError("unsupported syntax: %s" % type(node).__name__)
