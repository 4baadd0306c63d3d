"""HTML cards for [[.Entity]] listings."""
import html


def render_[[.Entity]]_card(item):
    """item: dict with title and optional note, both user-supplied."""
    title = html.escape(item["title"])
    note = html.escape(item.get("note", ""))
    return '<div class="[[.Entity]]"><h3>%s</h3><p>%s</p></div>' % (title, note)
