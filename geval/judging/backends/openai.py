"""OpenAI and any OpenAI-compatible server (vLLM, Ollama, llama.cpp server) via the openai SDK.

Mode "logprobs": one greedy answer with top_logprobs; each aspect's distribution is read
from the alternatives at its score token. Mode "samples": n sampled answers (G-EVAL: n=20),
each parsed, then the weighted mean of seed 001. Mode "auto" uses logprobs and falls back to
samples, for good, the first time the server returns none. Retries with backoff on 429, 5xx,
timeouts and dropped connections (honouring Retry-After) are the SDK's own (`max_retries`); a
connection refused or a host that does not exist is not retried (nothing listens there: asking
again only delays the line that says so) and ends the run (`JudgeUnreachable`).
The API key is used for the client only: it is never part of settings, signatures or logs, and
it is masked in error messages in case a server echoes it back.
"""

from __future__ import annotations

import math
import os
import re
import socket
from urllib.parse import urlsplit
from urllib.request import getproxies, proxy_bypass

from geval.errors import JudgeError, JudgeUnreachable, JudgmentFailed
from geval.judging import checkup
from geval.judging.answers import locate_score, read_score, scores_from_samples
from geval.judging.judgment import AspectScore, Judgment, approx_tokens, form_answer
from geval.judging.aspects import Aspect

MODES = ("auto", "logprobs", "samples")
#: USD per million (input, output) tokens, for the cost estimate; override with `prices`.
PRICES = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4": (30.00, 60.00),
    "gpt-3.5-turbo": (0.50, 1.50),
}


#: Where the judge goes without a base URL.
OPENAI_URL = "https://api.openai.com/v1"


class OpenAIJudge:
    """A chat-completions endpoint. `base_url` None means api.openai.com.

    `settings` are what was asked (mode "auto" included); each Judgment carries the settings
    that made it (`mode:logprobs` or `mode:samples` with n and temperature), so an "auto"
    judgment's signature and cache key say what it did. `accepts` lists the settings whose
    cached answers answer this judge: both for "auto", else its own.
    """

    #: Calls may come from several threads at once (the SDK client is thread-safe); the
    #: runner's `concurrency` setting decides how many, up to this.
    max_concurrency = 256
    #: Seconds a call takes, for estimates before any was timed (a short answer from a hosted model).
    seconds_per_call = 1.5
    #: It answers from a server: a long wait for an answer may be the SDK retrying one it cannot reach.
    remote = True

    def __init__(
        self,
        model: str = "",  # required: said in one line below when missing (not as a TypeError)
        base_url: str | None = None,
        api_key: str | None = None,
        mode: str = "auto",
        n: int = 20,
        temperature: float = 1.0,
        max_tokens: int = 16,
        top_logprobs: int = 20,
        timeout: float = 60.0,
        max_retries: int = 5,
        prices: tuple[float, float] | None = None,
    ):
        try:
            import openai
        except ImportError:
            raise JudgeError("the openai judge needs the openai package: run `pip install -r requirements.txt`") from None
        if mode not in MODES:
            raise JudgeError(f"mode '{mode}' is unknown; use one of {', '.join(MODES)}")
        if not model:
            raise JudgeError("the openai judge needs a model name, e.g. --model gpt-4o-mini")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None:
                raise JudgeError("no API key: set OPENAI_API_KEY (in the app, or type a key in the sidebar)")
            key = "not-needed"  # local servers (vLLM, Ollama, llama.cpp) usually take any key
        base_url = (base_url or OPENAI_URL).rstrip("/")  # with or without "/": one judge
        self._openai = openai
        self._client = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries,
                                     http_client=_http_client(openai, base_url))
        self.mode = mode
        self.n, self.temperature, self.max_tokens, self.top_logprobs = n, temperature, max_tokens, top_logprobs
        self.prices = prices or PRICES.get(model, (0.0, 0.0))
        self.priced = prices is not None or model in PRICES  # else a cost of 0 means "not known"
        self._use_samples = mode == "samples"
        self._logprobs_seen = False  # "auto": whether the server has sent logprobs (estimates count samples until then)
        judge = {"backend": "openai", "model": model, "base_url": base_url}
        self.settings = {
            **judge,
            "mode": mode,
            "temp": temperature if mode != "logprobs" else None,
            "n": n if mode != "logprobs" else None,
            "top_logprobs": top_logprobs if mode != "samples" else None,
            "max_tokens": max_tokens,
        }
        self._logprobs_settings = {**judge, "mode": "logprobs", "temp": None, "n": None,
                                   "top_logprobs": top_logprobs, "max_tokens": max_tokens}
        self._samples_settings = {**judge, "mode": "samples", "temp": temperature, "n": n,
                                  "top_logprobs": None, "max_tokens": max_tokens}
        self.accepts = {"auto": [self._logprobs_settings, self._samples_settings],
                        "logprobs": [self._logprobs_settings], "samples": [self._samples_settings]}[mode]

    def judge(self, prompt: str, aspects: list[Aspect]) -> Judgment:
        """Score `prompt` by logprobs or by samples, as the mode says. In "auto" mode a server
        that returns no logprobs is asked for samples from then on; the first request's usage
        is counted in that judgment's cost."""
        budget = max(self.max_tokens, 8 * len(aspects))
        if not self._use_samples:
            answer = self._create(prompt, budget, temperature=0.0, logprobs=True, top_logprobs=self.top_logprobs)
            judgment = self._from_logprobs(answer, aspects)
            if judgment is not None:
                self._logprobs_seen = True
                return judgment
            if self.mode == "logprobs":
                raise JudgmentFailed("the server returned no logprobs; use mode 'samples' (or 'auto') for this server")
            self._use_samples = True
            self.accepts = [self._samples_settings, self._logprobs_settings]  # its next calls' settings first
            return self._from_samples(prompt, aspects, budget, earlier=[answer])
        return self._from_samples(prompt, aspects, budget)

    def estimate(self, prompt: str, aspects: list[Aspect]) -> tuple[int, int, float]:
        """(prompt tokens, answer tokens, cost) a call may be billed, at most, before it is made
        (tokens as characters / 4): in logprobs mode one request and the form's short answer; in
        samples mode the prompt once and n answers of up to max_tokens each (a server that ignores
        n is asked again: more); in "auto" mode, until a server has sent logprobs, both (the
        logprobs request, then the samples asked when it sends none), after that as logprobs."""
        prompt_tokens, greedy = approx_tokens(prompt), approx_tokens(form_answer(aspects))
        sampled = self.n * max(self.max_tokens, 8 * len(aspects))
        if self._use_samples:
            calls, answer_tokens = 1, sampled
        elif self._bounded:
            calls, answer_tokens = 2, greedy + sampled
        else:
            calls, answer_tokens = 1, greedy
        return calls * prompt_tokens, answer_tokens, self._cost(calls * prompt_tokens, answer_tokens)

    def estimate_with_logprobs(self, prompt: str, aspects: list[Aspect]) -> tuple[int, int, float] | None:
        """What a call is billed if the server gives logprobs, while `estimate` is a bound that also
        counts the samples asked of a server that gives none ("auto" mode before the server has
        answered); None when `estimate` is what it is billed."""
        if not self._bounded:
            return None
        prompt_tokens, answer_tokens = approx_tokens(prompt), approx_tokens(form_answer(aspects))
        return prompt_tokens, answer_tokens, self._cost(prompt_tokens, answer_tokens)

    @property
    def _bounded(self) -> bool:
        """Whether a call may be asked both ways: "auto" mode, before the server has said which."""
        return self.mode == "auto" and not self._use_samples and not self._logprobs_seen

    def batch_body(self, prompt: str, aspects: list[Aspect]) -> dict:
        """The body `judge` sends first, for a Batch API file (mode "auto" asks for logprobs)."""
        body = {"model": self.settings["model"], "messages": [{"role": "user", "content": prompt}],
                "max_tokens": max(self.max_tokens, 8 * len(aspects))}
        if self.mode == "samples":
            return {**body, "temperature": self.temperature, "n": self.n}
        return {**body, "temperature": 0.0, "logprobs": True, "top_logprobs": self.top_logprobs}

    def check(self, on_step: checkup.OnStep = checkup.ignore) -> checkup.Checkup:
        """Whether this judge answers: versions and a test judgment from the server (`python -m geval doctor`)."""
        return checkup.answering(self, "from the server", on_step)

    def generate(self, prompt: str, max_tokens: int = 256) -> str:
        """Greedy free text (auto chain-of-thought)."""
        answer = self._create(prompt, max_tokens, temperature=0.0)
        return (answer.choices[0].message.content or "") if answer.choices else ""

    def _create(self, prompt: str, max_tokens: int, **options):
        """One chat completion; SDK errors become JudgeError (fix the setup) or JudgmentFailed.
        Text from the server is masked (`_mask`) before it goes into a message."""
        openai = self._openai
        try:
            answer = self._client.chat.completions.create(
                model=self.settings["model"],
                messages=[{"role": "user", "content": prompt}],
                max_tokens=max_tokens,
                **options,
            )
            if not isinstance(getattr(answer, "choices", None), list):
                shown = _clip(self._mask(str(answer)))
                raise JudgmentFailed(f"malformed answer from the server (no 'choices' list): {shown}")
            return answer
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise JudgeError(f"the server refused the API key ({exc.status_code}); check the key") from None
        except openai.NotFoundError:
            raise JudgeError(
                f"model '{self.settings['model']}' or endpoint {self.settings['base_url']} not found (404); check both"
            ) from None
        except openai.APITimeoutError:
            raise JudgmentFailed(f"timed out after {self._client.max_retries} retries") from None
        except openai.APIConnectionError as exc:
            cause = self._mask(str(exc.__cause__ or exc))
            retries = self._client.max_retries
            why = _unreachable(exc)
            if why:
                raise JudgeUnreachable(f"cannot reach {self.settings['base_url']}: {why}; {FIX[why]} (sidebar: "
                                       "Judge settings; command line: --base-url)") from None
            raise JudgmentFailed(f"connection failed after {retries} retries ({cause})") from None
        except openai.APIStatusError as exc:
            shown = _clip(self._mask(str(exc.message)))
            raise JudgmentFailed(f"HTTP {exc.status_code} from the server: {shown}") from None
        except openai.APIError as exc:
            raise JudgmentFailed(f"unreadable answer from the server: {_clip(self._mask(str(exc)))}") from None
        except ValueError as exc:  # a 200 whose body is not valid JSON: the SDK lets json's error through
            shown = _clip(self._mask(str(exc)))
            raise JudgmentFailed(f"unreadable answer from the server (not JSON: {shown})") from None

    def _mask(self, text: str) -> str:
        """`text` with the API key replaced where it stands as a word of its own, in case the server echoed it (before
        any clipping): a short key ("x", for a local server) replaced inside words made "Expecting" "E[API key]pecting"."""
        key = self._client.api_key
        if not key or key == "not-needed":
            return text
        return re.sub(rf"(?<![\w-]){re.escape(key)}(?![\w-])", "[API key]", text)

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.prices[0] + completion_tokens * self.prices[1]) / 1e6

    def _usage(self, answers: list) -> tuple[int, int, float]:
        prompt_tokens = sum(getattr(a.usage, "prompt_tokens", 0) or 0 for a in answers if a.usage)
        completion_tokens = sum(getattr(a.usage, "completion_tokens", 0) or 0 for a in answers if a.usage)
        return prompt_tokens, completion_tokens, self._cost(prompt_tokens, completion_tokens)

    def _from_logprobs(self, answer, aspects: list[Aspect]) -> Judgment | None:
        """Each aspect's distribution from top_logprobs at its score token. None when the server
        sent no logprobs, or in "auto" mode no top_logprobs (only the chosen tokens'): then the
        distribution cannot be read and samples are asked for instead."""
        if not answer.choices:
            raise JudgmentFailed("the server answered with no choices")
        choice = answer.choices[0]
        content = getattr(choice.logprobs, "content", None) if choice.logprobs else None
        if content is None:  # an empty list is an empty answer (unscored below), not a server without logprobs
            return None
        if self.mode == "auto" and content and not any(position.top_logprobs for position in content):
            return None
        text = "".join(position.token for position in content) if content else (choice.message.content or "")
        single = len(aspects) == 1
        scores = {}
        for aspect in aspects:
            found = locate_score(text, aspect, single)
            read = read_score(text, aspect, single)
            scores[aspect.key] = AspectScore.unscored(read) if isinstance(read, str) else \
                _distribution_at(content, found.start("value"), aspect)
        tokens_in, tokens_out, cost = self._usage([answer])
        return Judgment(scores, [choice.message.content or text], tokens_in, tokens_out, cost,
                        settings=self._logprobs_settings)

    def _from_samples(self, prompt: str, aspects: list[Aspect], budget: int, earlier: list | None = None) -> Judgment:
        """n sampled answers; servers that ignore `n` are asked again until n have come.
        `earlier`: answers already paid for in this judgment (auto mode's first request)."""
        answers, texts = [], []
        for _ in range(self.n):
            answer = self._create(prompt, budget, temperature=self.temperature, n=self.n - len(texts))
            answers.append(answer)
            texts.extend(c.message.content or "" for c in answer.choices)
            if len(texts) >= self.n:
                break
        texts = texts[: self.n]
        tokens_in, tokens_out, cost = self._usage([*(earlier or []), *answers])
        return Judgment(scores_from_samples(texts, aspects), texts, tokens_in, tokens_out, cost,
                        settings=self._samples_settings)


#: What to do when the server is not there, by why.
FIX = {"connection refused": "no server listens there: start it, or correct the base URL",
       "host not found": "correct the base URL"}


def _unreachable(error: BaseException) -> str:
    """Why a connection error (or an error it caused) means the server is not there ("connection
    refused", "host not found"), or "" when the server was reached and broke off its answer."""
    cause, chain = error, []
    while cause is not None and len(chain) < 10:
        chain.append(cause)
        cause = cause.__cause__ or cause.__context__
    if any(isinstance(c, socket.gaierror) or "Name or service not known" in str(c) for c in chain):
        return "host not found"
    if any(isinstance(c, ConnectionRefusedError) for c in chain):
        return "connection refused"
    return ""


def _http_client(openai, base_url: str):
    """The SDK's HTTP client, whose transport raises a connection refused (or a host not found) as
    an OpenAIError at once: the SDK passes those on without its retries. Proxies are taken from
    the environment for `base_url`, as the SDK's own client does."""
    import httpx2  # the SDK's HTTP library

    class StopWhereNothingListens(httpx2.HTTPTransport):
        def handle_request(self, request):
            try:
                return super().handle_request(request)
            except httpx2.ConnectError as exc:
                if _unreachable(exc):
                    raise openai.APIConnectionError(request=request) from exc
                raise

    parts = urlsplit(base_url)
    proxies = getproxies()
    proxy = None if proxy_bypass(parts.hostname or "") else proxies.get(parts.scheme) or proxies.get("all")
    # the SDK's own limits (openai._constants.DEFAULT_CONNECTION_LIMITS): many calls in flight at once
    limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
    return openai.DefaultHttpxClient(transport=StopWhereNothingListens(limits=limits, proxy=proxy))


def _distribution_at(content: list, offset: int, aspect: Aspect) -> AspectScore:
    """The distribution over `aspect`'s scale at the token holding character `offset` of the
    answer: its top_logprobs alternatives that read as a score (" 3", "3" and "3\n" are one
    score, and so are "Yes", " yes" and "YES." on a labelled scale; their probabilities added), normalized. `coverage` is the probability the server's
    top-k put on scores at all: what is missing went to other tokens or below the top k."""
    start = 0
    for position in content:
        if start + len(position.token) > offset:
            break
        start += len(position.token)
    if not position.top_logprobs:
        return AspectScore.unscored(f"the server sent no top_logprobs at the {aspect.name} score token")
    dist: dict[int, float] = {}
    for alternative in position.top_logprobs:
        score = score_of_token(alternative.token, aspect)
        if score is not None and score in aspect.scale:
            dist[score] = dist.get(score, 0.0) + math.exp(alternative.logprob)
    result = AspectScore.from_distribution(dist)
    result.coverage = float(sum(dist.values()))
    return result


def score_of_token(token: str, aspect: Aspect) -> int | None:
    """The score a token reads as ("3", " 3", "3\n", "3."; a label in any case: " Yes"), or None."""
    match = re.fullmatch(r"\s*(\w+)\s*[.,;:/!]?\s*", token)
    if not match:
        return None
    word = match.group(1).lower()
    labels = [label.lower() for label in aspect.labels]
    if labels:
        return aspect.min + labels.index(word) if word in labels else None
    return int(word) if word.isascii() and word.isdigit() else None  # not '³'


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
