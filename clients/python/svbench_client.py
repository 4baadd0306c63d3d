"""Client for the svbench reward and environment server (``svbench serve``).

Standard library only, so it drops into any trainer's environment. Three
ready-made reward hooks wrap the HTTP API:

* ``verifiers_reward(env)``  -> ``f(completion, answer, **kwargs) -> float``
  (a `verifiers` Rubric reward function);
* ``trl_reward(env)``        -> ``f(prompts, completions, **kwargs) -> list[float]``
  (a TRL ``reward_funcs`` entry; dataset columns such as ``example_id`` or
  ``answer`` arrive in kwargs);
* ``compute_score(data_source, solution_str, ground_truth, extra_info=None)``
  (verl's ``custom_reward_function``; ``data_source`` names the environment).

The server is found through ``SVBENCH_URL`` (default http://127.0.0.1:8080)
and authenticated with ``SVBENCH_TOKEN`` when set. See server/README.md for
the protocol.
"""

import json
import os
import urllib.error
import urllib.parse
import urllib.request
import warnings

__all__ = [
    "Client",
    "SvbenchError",
    "verifiers_reward",
    "trl_reward",
    "compute_score",
]

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


# -- trainer hooks ------------------------------------------------------------------


def verifiers_reward(env, client=None, rubric=None, component=None, strict=False):
    """A `verifiers` reward function: f(completion, answer, **kwargs) -> float.

    completion is the text or message list verifiers passes; answer is the
    dataset's answer column. An example id in kwargs["info"]["example_id"]
    (or kwargs["example_id"]) is used instead of the answer when present.
    component returns one unweighted component instead of the total.
    """
    client = client or Client()

    def reward(completion, answer=None, **kwargs):
        info = kwargs.get("info") or {}
        example_id = info.get("example_id") if isinstance(info, dict) else None
        example_id = example_id or kwargs.get("example_id")
        item = make_item(env, completion, answer=answer, example_id=example_id, rubric=rubric)
        return _value(client.score([item])[0], component, strict)

    reward.__name__ = "svbench_%s_%s" % (env.replace("-", "_"), component or "reward")
    return reward


def trl_reward(env, client=None, rubric=None, component=None, strict=False):
    """A TRL reward function: f(prompts, completions, **kwargs) -> list[float].

    TRL passes the dataset's other columns as lists in kwargs; an
    ``example_id`` column names dataset examples, otherwise the ``answer``
    column (or ``example`` with whole rows) says what to score against.
    Completions may be strings or conversational message lists. One HTTP
    request scores the whole batch.
    """
    client = client or Client()

    def reward(prompts, completions, **kwargs):
        items = []
        for i, completion in enumerate(completions):
            items.append(make_item(
                env,
                completion,
                answer=_column(kwargs, "answer", i),
                example_id=_column(kwargs, "example_id", i),
                example=_column(kwargs, "example", i),
                rubric=rubric,
            ))
        return [_value(r, component, strict) for r in client.score(items)]

    reward.__name__ = "svbench_%s_%s" % (env.replace("-", "_"), component or "reward")
    return reward


_default_client = None


def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """verl's custom reward function.

    data_source names the environment (e1, network-logs, sv-env-network-logs,
    ...); ground_truth is the answer (JSON text is decoded). extra_info may
    carry "example_id" (used instead of ground_truth) and "rubric".
    Configure with SVBENCH_URL / SVBENCH_TOKEN. Failed items raise.
    """
    global _default_client
    if _default_client is None:
        _default_client = Client()
    extra_info = extra_info or {}
    item = make_item(
        data_source,
        solution_str,
        answer=ground_truth,
        example_id=extra_info.get("example_id"),
        rubric=extra_info.get("rubric"),
    )
    return _value(_default_client.score([item])[0], None, True)
