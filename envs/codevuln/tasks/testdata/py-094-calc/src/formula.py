"""Spreadsheet formula evaluation."""
import re

CELL = re.compile(r"\b([A-Z]{1,2}[0-9]{1,4})\b")
FUNCTIONS = {"min": min, "max": max, "abs": abs, "round": round}


class FormulaError(Exception):
    pass


def evaluate(formula, cells):
    """Evaluate '=expr'; cells maps references like 'A1' to numbers."""
    if not formula.startswith("="):
        raise FormulaError("formula must start with '='")
    expr = formula[1:].strip()
    if not expr:
        raise FormulaError("empty formula")

    def ref(m):
        name = m.group(1)
        if name not in cells:
            raise FormulaError("unknown cell " + name)
        return "(%r)" % (cells[name],)

    expr = CELL.sub(ref, expr)
    try:
        result = eval(expr, {"__builtins__": {}}, dict(FUNCTIONS))
    except ZeroDivisionError:
        raise FormulaError("division by zero")
    except Exception as e:
        raise FormulaError("invalid formula: %s" % e)
    if not isinstance(result, (int, float)) or isinstance(result, bool):
        raise FormulaError("formula did not produce a number")
    return result
