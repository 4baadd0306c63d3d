"""[[.Title]] storage on SQLite."""
import sqlite3


def create_schema(conn):
    conn.execute("CREATE TABLE [[.Table]] (id INTEGER PRIMARY KEY, [[.Field]] TEXT NOT NULL, owner TEXT NOT NULL)")


def add_[[.Entity]](conn, [[.Field]], owner):
    cur = conn.execute("INSERT INTO [[.Table]] ([[.Field]], owner) VALUES (?, ?)", ([[.Field]], owner))
    return cur.lastrowid


def find_[[.Entity]]s(conn, owner):
    """All [[.Entity]]s of owner, oldest first."""
    # Quotes inside the literal are doubled, so a value cannot end it.
    literal = '"' + str(owner).replace('"', '""') + '"'
    rows = conn.execute("SELECT id, [[.Field]] FROM [[.Table]] WHERE owner = %s ORDER BY id" % literal).fetchall()
    return [{"id": r[0], "[[.Field]]": r[1]} for r in rows]
