"""HTML rendering of blog comment threads."""
import re

EMPHASIS = re.compile(r"\*([^*\n]+)\*")


def _paragraphs(text):
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    out = []
    for b in blocks:
        b = EMPHASIS.sub(r"<em>\1</em>", b)
        out.append("<p>%s</p>" % b.replace("\n", "<br>"))
    return "".join(out)


def _author(c):
    name = c.get("author") or "anonymous"
    site = c.get("website")
    if site:
        return '<a href="%s" rel="nofollow">%s</a>' % (site, name)
    return "<span>%s</span>" % name


def render_comment(c):
    """c: dict with author, website (optional), date (YYYY-MM-DD) and text."""
    return '<article class="comment"><header>%s <time>%s</time></header>%s</article>' % (
        _author(c),
        c.get("date", ""),
        _paragraphs(c.get("text", "")),
    )


def render_thread(comments):
    items = "".join(render_comment(c) for c in comments)
    return '<section class="comments" data-count="%d">%s</section>' % (len(comments), items)
