"""HTTP client for the svbench reward and environment server (``svbench serve``).

Standard library only. The trainer adapters live beside it (svbench.trl,
svbench.verl, svbench.openrlhf_reward, svbench.verifiers). The server is found through ``SVBENCH_URL`` (default http://127.0.0.1:8080)
and authenticated with ``SVBENCH_TOKEN`` when set. See server/README.md for
the protocol.
"""

from __future__ import annotations

import json
import math
import numbers
import os
import urllib.error
import urllib.parse
import urllib.request
import warnings
from typing import Any, Dict, Iterable, List, Optional, Union

__all__ = ["Client", "SvbenchError", "make_item", "rubric_info", "all_components", "finite"]

DEFAULT_URL = "http://127.0.0.1:8080"

# Generous: a full /v1/score batch of long completions with their parsed
# fields is a few MiB. The cap is there so that a broken or hostile server
# cannot make a trainer process hold hundreds of MiB in one read.
DEFAULT_MAX_RESPONSE_BYTES = 64 << 20

#: A decoded JSON value as the server sends it.
JSON = Any
#: One /v1/score item, result or session answer: a JSON object.
Obj = Dict[str, Any]


class SvbenchError(Exception):
    """An error answer from the server, or a failed item when strict."""

    def __init__(self, code: str, message: str, status: Optional[int] = None, request_id: Optional[str] = None) -> None:
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.status = status
        self.request_id = request_id


class _NonFinite:
    """What a NaN, Infinity or -Infinity literal in an answer parses to.

    JSON has no such literals (Go's encoder cannot write them), yet Python's
    json module accepts them by default, as floats that poison every sum
    they enter. This stand-in is not a number: reward checks see a failed
    item, and anything else that asks for its float value gets a clear
    error instead of a NaN."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal

    def __float__(self) -> float:
        raise SvbenchError("non_finite_number", "the server sent %s where a finite number was expected" % self.literal)

    def __repr__(self) -> str:
        return "<non-finite %s>" % self.literal


def _loads(raw: bytes) -> JSON:
    return json.loads(raw.decode("utf-8"), parse_constant=_NonFinite)


def finite(v: Any) -> Optional[float]:
    """v as a float when it is a finite JSON number, else None.

    Strings are not numbers here even when float() would read them
    ("Infinity", "nan", "1.5"): the protocol sends numbers, so a string is
    a broken answer. Neither are booleans, although Python counts them as
    ints. numbers.Real rather than float lets numpy scalars through (a
    trainer may hand back what it stored in an array)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return None
    try:
        f = float(v)
    except OverflowError:  # an integer beyond float range
        return None
    return f if math.isfinite(f) else None


def _describe(v: Any) -> str:
    if isinstance(v, (_NonFinite, bool, int, float)) or v is None:
        return repr(v)
    return "%s %.40r" % (type(v).__name__, v)


def _result_problem(result: Any) -> Optional[str]:
    """Why one score result cannot be used as a reward, or None."""
    if not isinstance(result, dict):
        return "a result is %s, not an object" % _describe(result)
    if "reward" not in result:
        return "the result has no reward"
    if finite(result["reward"]) is None:
        return "reward %s is not a finite number" % _describe(result["reward"])
    comps = result.get("components")
    if comps is None:
        return None
    if not isinstance(comps, dict):
        return "components are %s, not an object" % _describe(comps)
    for k, v in comps.items():
        if finite(v) is None:
            return "component %s = %s is not a finite number" % (k, _describe(v))
    return None


def checked_result(result: Any) -> Obj:
    """One /v1/score result (or a session's score) as a trainer may use it.

    A result the server already failed keeps its error (a bare string is
    made {code, message}). A result whose reward or any component is not a
    finite number, or is missing, becomes a failed item like the server's
    own: reward 0.0, no components, error code invalid_result. The adapters
    then give their trainer the value they give any failed item."""
    err = result.get("error") if isinstance(result, dict) else None
    if err:
        if not isinstance(err, dict):
            err = {"code": "score_failed", "message": str(err)}
        if _result_problem(result) is not None:  # nothing NaN rides along on a failed item
            result = dict(result, reward=0.0, components={})
        return dict(result, error=err)
    problem = _result_problem(result)
    if problem is None:
        return result
    base = result if isinstance(result, dict) else {}
    return dict(base, reward=0.0, components={},
                error={"code": "invalid_result", "message": "svbench client: " + problem})


def _check_count(what: str, got: int, sent: int) -> None:
    if got != sent:
        raise SvbenchError(
            "result_count_mismatch",
            "the server answered %d %s for %d item%s; the batch cannot be matched to its items"
            % (got, what, sent, "" if sent == 1 else "s"))


class Client:
    """Talks to one svbench server.

    url and token default to $SVBENCH_URL and $SVBENCH_TOKEN. Large score
    batches are split into requests of at most batch_size items. An answer
    longer than max_response_bytes (default $SVBENCH_MAX_RESPONSE_BYTES or
    64 MiB) fails with response_too_large.
    """

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, timeout: float = 60.0, batch_size: int = 256,
                 max_response_bytes: Optional[int] = None) -> None:
        self.url = (url or os.environ.get("SVBENCH_URL") or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else os.environ.get("SVBENCH_TOKEN") or None
        self.timeout = timeout
        self.batch_size = max(1, int(batch_size))
        if max_response_bytes is None:
            max_response_bytes = int(os.environ.get("SVBENCH_MAX_RESPONSE_BYTES") or DEFAULT_MAX_RESPONSE_BYTES)
        if int(max_response_bytes) < 1:
            raise ValueError("max_response_bytes must be positive, not %r" % (max_response_bytes,))
        self.max_response_bytes = int(max_response_bytes)

    # -- transport ---------------------------------------------------------

    def _request(self, method: str, path: str, body: JSON = None, query: Optional[Dict[str, Any]] = None) -> JSON:
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
                raw = self._read(resp, method, path)
                try:
                    return _loads(raw)
                except ValueError as e:
                    raise SvbenchError("invalid_response", "%s %s: the answer is not JSON: %s" % (method, path, e),
                                       status=resp.status) from None
        except urllib.error.HTTPError as e:
            try:
                raw = self._read(e, method, path)
            except SvbenchError:  # an error page too large to read: its status is what matters
                raw = b""
            try:
                payload = _loads(raw)
                err = payload.get("error") or {}
                raise SvbenchError(
                    err.get("code", "http_%d" % e.code),
                    str(err.get("message", raw[:200].decode("utf-8", "replace")))[:1000],
                    status=e.code,
                    request_id=payload.get("request_id"),
                ) from None
            except (ValueError, AttributeError):
                raise SvbenchError("http_%d" % e.code, raw[:200].decode("utf-8", "replace"), status=e.code) from None

    def _read(self, resp: Any, method: str, path: str) -> bytes:
        """The body, refused past max_response_bytes: on an announced length
        before reading anything, otherwise after one byte more than allowed
        (a close-delimited or chunked body has no length to check)."""
        limit = self.max_response_bytes

        def too_large(size: str) -> SvbenchError:
            resp.close()
            return SvbenchError("response_too_large", "%s %s: the answer is %s, over the client's limit of %s "
                                "(Client(max_response_bytes=...) or SVBENCH_MAX_RESPONSE_BYTES)"
                                % (method, path, size, _size(limit)))

        announced = resp.headers.get("Content-Length") if resp.headers is not None else None
        if announced and announced.strip().isdigit() and int(announced) > limit:
            raise too_large(_size(int(announced)))
        raw = resp.read(limit + 1)
        if len(raw) > limit:
            raise too_large("more than %s" % _size(limit))
        return raw

    # -- API -----------------------------------------------------------------

    def healthy(self) -> bool:
        return self._request("GET", "/healthz").get("status") == "ok"

    def ready(self) -> bool:
        try:
            return self._request("GET", "/readyz").get("status") == "ready"
        except SvbenchError:
            return False

    def environments(self) -> List[Obj]:
        """Environment descriptions: id, version, rubrics, tools, system prompt."""
        return self._request("GET", "/v1/environments")["environments"]

    def environments_cached(self) -> List[Obj]:
        """environments(), fetched once per Client (rubric declarations do not
        change while a server runs)."""
        if getattr(self, "_envs_cache", None) is None:
            self._envs_cache = self.environments()
        return self._envs_cache

    def examples(self, env: str, split: Optional[str] = None, offset: int = 0, limit: int = 100, seed: Optional[int] = None) -> Obj:
        """One page of prompts: {"examples": [{"example_id", "prompt", "tools", "answer", ...}], "total": n}."""
        return self._request(
            "GET",
            "/v1/environments/%s/examples" % urllib.parse.quote(env, safe=""),
            query={"split": split, "offset": offset, "limit": limit, "seed": seed},
        )

    def score(self, items: Iterable[Obj]) -> List[Obj]:
        """Score items ({env, example_id | example | answer, completion, rubric?}).

        Returns one result per item, in order: {"reward", "components",
        "parsed", "error"}. Items fail independently.
        A result whose reward or a component is not a finite number (NaN,
        Infinity, a string, a boolean) or is missing comes back as a failed
        item (error code invalid_result, reward 0.0). A batch answered with
        more or fewer results than items raises result_count_mismatch:
        which result belongs to which item is then unknown.
        """
        items = list(items)
        out: List[Obj] = []
        for i in range(0, len(items), self.batch_size):
            chunk = items[i : i + self.batch_size]
            answer = self._request("POST", "/v1/score", {"items": chunk})
            results = answer.get("results") if isinstance(answer, dict) else None
            if not isinstance(results, list):
                raise SvbenchError("invalid_response", "/v1/score answered without a results list")
            _check_count("results", len(results), len(chunk))
            out.extend(checked_result(r) for r in results)
        return out

    def get_reward(self, query: List[str], prompts: List[str], labels: List[Any], env: Optional[str] = None,
                   labels_as: Optional[str] = None) -> Obj:
        """OpenRLHF's remote reward protocol.

        labels_as declares what the labels are: None or "id" (example ids or
        label objects), "answer" (plain gold answers) or "answer_json".

        A sample whose reward or score is not a finite number becomes a
        failed one, as the server writes its own: reward and score 0.0,
        every extra_logs entry 0.0 but svbench_error 1.0, and its errors
        entry says why. A list of another length than the queries raises
        result_count_mismatch.
        """
        q = {k: v for k, v in (("env", env), ("labels", labels_as)) if v} or None
        answer = self._request("POST", "/get_reward", {"query": query, "prompts": prompts, "labels": labels}, query=q)
        return _checked_get_reward(answer, len(query))

    def sessions_create(self, env: str, example_id: Optional[str] = None, example: Optional[Obj] = None, answer: JSON = None,
                        rubric: Optional[str] = None, max_turns: Optional[int] = None,
                        idle_timeout_s: Optional[float] = None) -> Obj:
        """Start a server-held episode: {"session_id", "prompt", "tools", "max_turns", "idle_timeout_s", ...}.

        idle_timeout_s asks the server to close the session after that many
        seconds without a request, sooner than its --session-idle; the answer's
        idle_timeout_s says what it applies (a server that does not know the
        field ignores it)."""
        body = {"env": env}
        for k, v in (("example_id", example_id), ("example", example), ("answer", answer),
                     ("rubric", rubric), ("max_turns", max_turns), ("idle_timeout_s", idle_timeout_s)):
            if v is not None and v != "":
                body[k] = v
        return self._request("POST", "/v1/sessions", body)

    def sessions_step(self, session_id: str, message: Obj) -> Obj:
        """One assistant message -> {"turn", "observations", "done", "score"?}.
        A score whose reward is not a finite number is a failed one (see score())."""
        return _with_checked_score(self._request(
            "POST", "/v1/sessions/%s/step" % urllib.parse.quote(session_id, safe=""), {"message": message}))

    def sessions_get(self, session_id: str) -> Obj:
        return _with_checked_score(self._request("GET", "/v1/sessions/%s" % urllib.parse.quote(session_id, safe="")))

    def sessions_delete(self, session_id: str) -> Obj:
        return self._request("DELETE", "/v1/sessions/%s" % urllib.parse.quote(session_id, safe=""))

    def rollout(self, env: str, base_url: str, model: str, example_id: Optional[str] = None, example: Optional[Obj] = None,
                sampling: Optional[Obj] = None, api_key_env: Optional[str] = None, max_turns: Optional[int] = None,
                rubric: Optional[str] = None) -> Obj:
        """Have the server play a whole episode against an OpenAI-compatible endpoint."""
        body: Obj = {"env": env, "base_url": base_url, "model": model}
        for k, v in (("example_id", example_id), ("example", example), ("sampling", sampling),
                     ("api_key_env", api_key_env), ("max_turns", max_turns), ("rubric", rubric)):
            if v is not None:
                body[k] = v
        return _with_checked_score(self._request("POST", "/v1/rollout", body))


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return "%d MiB" % (n >> 20)
    return "%d bytes" % n


def _with_checked_score(answer: JSON) -> JSON:
    if isinstance(answer, dict) and answer.get("score") is not None:
        answer = dict(answer, score=checked_result(answer["score"]))
    return answer


def _checked_get_reward(answer: JSON, n: int) -> Obj:
    """/get_reward's answer with its lengths checked and every sample whose
    reward or score is not finite turned into a failed sample."""
    if not isinstance(answer, dict) or not isinstance(answer.get("rewards"), list):
        raise SvbenchError("invalid_response", "/get_reward answered without a rewards list")
    rewards = answer["rewards"]
    scores = answer.get("scores", rewards)
    logs = answer.get("extra_logs") or {}
    errors = answer.get("errors")
    if not isinstance(scores, list) or not isinstance(logs, dict) or not all(isinstance(v, list) for v in logs.values()) \
            or not (errors is None or isinstance(errors, list)):
        raise SvbenchError("invalid_response", "/get_reward answered scores, extra_logs or errors that are not lists")
    _check_count("rewards", len(rewards), n)
    _check_count("scores", len(scores), n)
    for k, v in logs.items():
        _check_count("%s logs" % k, len(v), n)
    if errors is not None:
        _check_count("errors", len(errors), n)
    out_r, out_s, out_e = [], [], []
    out_logs: Dict[str, List[Any]] = {k: [] for k in logs}
    for i in range(n):
        problem = None
        for what, v in (("reward", rewards[i]), ("score", scores[i])):
            if problem is None and finite(v) is None:
                problem = "%s %s is not a finite number" % (what, _describe(v))
        for k in logs:
            if problem is None and finite(logs[k][i]) is None:
                problem = "extra_logs %s = %s is not a finite number" % (k, _describe(logs[k][i]))
        if problem is None:
            out_r.append(finite(rewards[i]))
            out_s.append(finite(scores[i]))
            for k in logs:
                out_logs[k].append(finite(logs[k][i]))
            out_e.append(errors[i] if errors is not None else "")
            continue
        out_r.append(0.0)
        out_s.append(0.0)
        for k in logs:
            out_logs[k].append(1.0 if k == "svbench_error" else 0.0)
        out_e.append("invalid_result: svbench client: " + problem)
    out = dict(answer, rewards=out_r, scores=out_s, extra_logs=out_logs)
    if errors is not None or any(out_e):
        out["errors"] = out_e
    return out


# -- helpers shared by the reward hooks ----------------------------------------


def _answer_value(answer: JSON) -> JSON:
    """Datasets often store structured answers as JSON text; send them as JSON."""
    if isinstance(answer, str):
        s = answer.strip()
        if s[:1] in ("{", "["):
            try:
                return json.loads(s)
            except ValueError:
                pass
    return answer


def make_item(env: str, completion: Union[str, List[Obj]], answer: JSON = None, example_id: Optional[str] = None,
              example: Optional[Obj] = None, rubric: Optional[str] = None) -> Obj:
    """Build one /v1/score item; the example id wins over the answer."""
    item: Obj = {"env": env, "completion": completion}
    if example_id is not None and example_id != "":
        item["example_id"] = example_id
    elif example is not None:
        item["example"] = example
    else:
        item["answer"] = _answer_value(answer)
    if rubric:
        item["rubric"] = rubric
    return item


def _value(result: Any, component: Optional[str], strict: bool) -> Optional[float]:
    # Checked again here: a result may come from a client other than ours.
    result = checked_result(result)
    err = result.get("error")
    if err:
        if strict:
            raise SvbenchError(err.get("code"), err.get("message"))
        warnings.warn("svbench: item failed, reward 0: %s: %s" % (err.get("code"), err.get("message")))
        return 0.0
    if component:
        return finite((result.get("components") or {}).get(component, 0.0))
    return finite(result["reward"])


def _column(kwargs: Dict[str, Any], name: str, i: int) -> Any:
    col = kwargs.get(name)
    if isinstance(col, (list, tuple)) and i < len(col):
        return col[i]
    return None


def _env_matches(info: Obj, env: str) -> bool:
    return env == info.get("id") or env in (info.get("aliases") or [])


def rubric_info(client: Client, env: str, rubric: Optional[str] = None) -> Obj:
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


def all_components(client: Client) -> List[str]:
    """Every component any served environment declares for any rubric, sorted:
    the fixed key set verl and OpenRLHF need on every item, scored or failed."""
    names = set()
    for info in client.environments_cached():
        for r in info.get("rubric_info") or []:
            for c in r.get("components") or []:
                names.add(c["name"])
    return sorted(names)


_default_client: Optional[Client] = None


def default_client() -> Client:
    """One shared Client configured from SVBENCH_URL / SVBENCH_TOKEN, for the
    module-level hooks (verl's compute_score, OpenRLHF's reward_func) that a
    trainer loads by name and cannot hand a client to."""
    global _default_client
    if _default_client is None:
        _default_client = Client()
    return _default_client
