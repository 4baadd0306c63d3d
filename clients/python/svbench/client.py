"""HTTP client for the svbench reward and environment server (``svbench serve``).

Standard library only. The trainer adapters live beside it (svbench.trl,
svbench.verl, svbench.openrlhf_reward, svbench.verifiers). The server is found through ``SVBENCH_URL`` (default http://127.0.0.1:8080)
and authenticated with ``SVBENCH_TOKEN`` when set. See server/README.md for
the protocol.
"""

import json
import os
import urllib.error
import urllib.parse
import urllib.request
import warnings

__all__ = ["Client", "SvbenchError", "make_item", "rubric_info", "all_components"]

DEFAULT_URL = "http://127.0.0.1:8080"


class SvbenchError(Exception):
    """An error answer from the server, or a failed item when strict."""

    def __init__(self, code, message, status=None, request_id=None):
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.status = status
        self.request_id = request_id


class Client:
    """Talks to one svbench server.

    url and token default to $SVBENCH_URL and $SVBENCH_TOKEN. Large score
    batches are split into requests of at most batch_size items.
    """

    def __init__(self, url=None, token=None, timeout=60.0, batch_size=256):
        self.url = (url or os.environ.get("SVBENCH_URL") or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else os.environ.get("SVBENCH_TOKEN") or None
        self.timeout = timeout
        self.batch_size = max(1, int(batch_size))

    # -- transport ---------------------------------------------------------

    def _request(self, method, path, body=None, query=None):
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                payload = json.loads(raw.decode("utf-8"))
                err = payload.get("error") or {}
                raise SvbenchError(
                    err.get("code", "http_%d" % e.code),
                    err.get("message", raw[:200].decode("utf-8", "replace")),
                    status=e.code,
                    request_id=payload.get("request_id"),
                ) from None
            except (ValueError, AttributeError):
                raise SvbenchError("http_%d" % e.code, raw[:200].decode("utf-8", "replace"), status=e.code) from None

    # -- API -----------------------------------------------------------------

    def healthy(self):
        return self._request("GET", "/healthz").get("status") == "ok"

    def ready(self):
        try:
            return self._request("GET", "/readyz").get("status") == "ready"
        except SvbenchError:
            return False

    def environments(self):
        """Environment descriptions: id, version, rubrics, tools, system prompt."""
        return self._request("GET", "/v1/environments")["environments"]

    def environments_cached(self):
        """environments(), fetched once per Client (rubric declarations do not
        change while a server runs)."""
        if getattr(self, "_envs_cache", None) is None:
            self._envs_cache = self.environments()
        return self._envs_cache

    def examples(self, env, split=None, offset=0, limit=100, seed=None):
        """One page of prompts: {"examples": [{"example_id", "prompt", "tools", "answer", ...}], "total": n}."""
        return self._request(
            "GET",
            "/v1/environments/%s/examples" % urllib.parse.quote(env, safe=""),
            query={"split": split, "offset": offset, "limit": limit, "seed": seed},
        )

    def score(self, items):
        """Score items ({env, example_id | example | answer, completion, rubric?}).

        Returns one result per item, in order: {"reward", "components",
        "parsed", "error"}. Items fail independently.
        """
        items = list(items)
        out = []
        for i in range(0, len(items), self.batch_size):
            out.extend(self._request("POST", "/v1/score", {"items": items[i : i + self.batch_size]})["results"])
        return out

    def get_reward(self, query, prompts, labels, env=None, labels_as=None):
        """OpenRLHF's remote reward protocol.

        labels_as declares what the labels are: None or "id" (example ids or
        label objects), "answer" (plain gold answers) or "answer_json".
        """
        q = {k: v for k, v in (("env", env), ("labels", labels_as)) if v} or None
        return self._request("POST", "/get_reward", {"query": query, "prompts": prompts, "labels": labels}, query=q)

    def sessions_create(self, env, example_id=None, example=None, answer=None, rubric=None, max_turns=None):
        """Start a server-held episode: {"session_id", "prompt", "tools", "max_turns", ...}."""
        body = {"env": env}
        for k, v in (("example_id", example_id), ("example", example), ("answer", answer),
                     ("rubric", rubric), ("max_turns", max_turns)):
            if v is not None and v != "":
                body[k] = v
        return self._request("POST", "/v1/sessions", body)

    def sessions_step(self, session_id, message):
        """One assistant message -> {"turn", "observations", "done", "score"?}."""
        return self._request("POST", "/v1/sessions/%s/step" % urllib.parse.quote(session_id, safe=""), {"message": message})

    def sessions_get(self, session_id):
        return self._request("GET", "/v1/sessions/%s" % urllib.parse.quote(session_id, safe=""))

    def sessions_delete(self, session_id):
        return self._request("DELETE", "/v1/sessions/%s" % urllib.parse.quote(session_id, safe=""))

    def rollout(self, env, base_url, model, example_id=None, example=None, sampling=None, api_key_env=None, max_turns=None, rubric=None):
        """Have the server play a whole episode against an OpenAI-compatible endpoint."""
        body = {"env": env, "base_url": base_url, "model": model}
        for k, v in (("example_id", example_id), ("example", example), ("sampling", sampling),
                     ("api_key_env", api_key_env), ("max_turns", max_turns), ("rubric", rubric)):
            if v is not None:
                body[k] = v
        return self._request("POST", "/v1/rollout", body)


# -- helpers shared by the reward hooks ----------------------------------------


def _answer_value(answer):
    """Datasets often store structured answers as JSON text; send them as JSON."""
    if isinstance(answer, str):
        s = answer.strip()
        if s[:1] in ("{", "["):
            try:
                return json.loads(s)
            except ValueError:
                pass
    return answer


def make_item(env, completion, answer=None, example_id=None, example=None, rubric=None):
    """Build one /v1/score item; the example id wins over the answer."""
    item = {"env": env, "completion": completion}
    if example_id is not None and example_id != "":
        item["example_id"] = example_id
    elif example is not None:
        item["example"] = example
    else:
        item["answer"] = _answer_value(answer)
    if rubric:
        item["rubric"] = rubric
    return item


def _value(result, component, strict):
    err = result.get("error")
    if err:
        if strict:
            raise SvbenchError(err.get("code"), err.get("message"))
        warnings.warn("svbench: item failed, reward 0: %s: %s" % (err.get("code"), err.get("message")))
        return 0.0
    if component:
        return float(result.get("components", {}).get(component, 0.0))
    return float(result["reward"])


def _column(kwargs, name, i):
    col = kwargs.get(name)
    if isinstance(col, (list, tuple)) and i < len(col):
        return col[i]
    return None


def _env_matches(info, env):
    return env == info.get("id") or env in (info.get("aliases") or [])


def rubric_info(client, env, rubric=None):
    """The rubric_info entry of /v1/environments for env (an id or alias) and
    rubric (default: the environment's default rubric):
    {"name", "total_min", "total_max", "components": [{"name", "weight", "min", "max", "optional"?}]}.
    """
    for info in client.environments_cached():
        if _env_matches(info, env):
            name = rubric or info.get("default_rubric") or "default"
            for r in info.get("rubric_info") or []:
                if r.get("name") == name:
                    return r
            raise SvbenchError("unknown_rubric", "environment %s has no rubric_info for rubric %r" % (env, name))
    raise SvbenchError("unknown_environment", "the server does not serve %r" % (env,))


def all_components(client):
    """Every component any served environment declares for any rubric, sorted:
    the fixed key set verl and OpenRLHF need on every item, scored or failed."""
    names = set()
    for info in client.environments_cached():
        for r in info.get("rubric_info") or []:
            for c in r.get("components") or []:
                names.add(c["name"])
    return sorted(names)


_default_client = None


def default_client():
    """One shared Client configured from SVBENCH_URL / SVBENCH_TOKEN, for the
    module-level hooks (verl's compute_score, OpenRLHF's reward_func) that a
    trainer loads by name and cannot hand a client to."""
    global _default_client
    if _default_client is None:
        _default_client = Client()
    return _default_client
