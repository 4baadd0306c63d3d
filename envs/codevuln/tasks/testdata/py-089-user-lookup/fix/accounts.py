"""Account directory backed by SQLite."""
import sqlite3

ORDERABLE = ("name", "email", "created")


def create_schema(conn):
    conn.execute(
        "CREATE TABLE IF NOT EXISTS users ("
        " id INTEGER PRIMARY KEY AUTOINCREMENT,"
        " name TEXT UNIQUE NOT NULL,"
        " email TEXT NOT NULL,"
        " role TEXT NOT NULL DEFAULT 'user',"
        " created INTEGER NOT NULL DEFAULT 0)"
    )
    conn.execute("CREATE TABLE IF NOT EXISTS secrets (owner TEXT, token TEXT)")


def add_user(conn, username, email, role="user"):
    cur = conn.execute(
        "INSERT INTO users (name, email, role, created) VALUES (?, ?, ?, "
        "(SELECT COUNT(*) FROM users))",
        (username, email, role),
    )
    return cur.lastrowid


def _row(row):
    if row is None:
        return None
    return {"id": row[0], "name": row[1], "email": row[2], "role": row[3]}


def find_user(conn, username):
    """Return the account named exactly username, or None."""
    query = "SELECT id, name, email, role FROM users WHERE name = ?"
    return _row(conn.execute(query, (username,)).fetchone())


def _escape_like(s):
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def search_users(conn, prefix, order_by="name", limit=20):
    """Accounts whose name starts with prefix, sorted by order_by."""
    if order_by not in ORDERABLE:
        raise ValueError("cannot order by %r" % (order_by,))
    limit = max(1, min(int(limit), 100))
    # order_by is checked against a fixed allow-list above, so it is safe to
    # splice; everything user-controlled travels as a bound parameter.
    query = (
        "SELECT id, name, email, role FROM users WHERE name LIKE ? ESCAPE '\\' "
        "ORDER BY " + order_by + " LIMIT ?"
    )
    return [_row(r) for r in conn.execute(query, (_escape_like(prefix) + "%", limit)).fetchall()]
