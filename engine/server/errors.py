"""OpenAI-style error bodies: every rejected request says what was wrong and which field caused it."""
from __future__ import annotations

from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

_TYPES = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
          405: "invalid_request_error", 413: "invalid_request_error", 429: "rate_limit_error"}


class APIError(Exception):
    """A request the server refuses; rendered as {"error": {message, type, param, code}}."""

    def __init__(self, status: int, message: str, param: str | None = None, code: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.headers = headers or {}


def error_body(status: int, message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    kind = _TYPES.get(status, "server_error" if status >= 500 else "invalid_request_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _error_response(exc: APIError) -> JSONResponse:
    return JSONResponse(error_body(exc.status, exc.message, exc.param, exc.code), status_code=exc.status,
                        headers=exc.headers)


def field_path(loc: tuple[Any, ...]) -> str:
    """('body', 'messages', 0, 'role') -> 'messages[0].role' (the form OpenAI uses in `param`)."""
    out = ""
    for part in loc:
        if part == "body" and not out:
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif isinstance(part, str) and not part.startswith(("function-", "list[", "str", "int", "float",
                                                            "union[", "literal[", "json-or-python")):
            out += ("." if out else "") + part
    return out or "body"


def _validation_message(err: dict[str, Any], param: str) -> str:
    msg = str(err.get("msg", "invalid value"))
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if err.get("type") == "json_invalid":
        return f"the request body is not valid JSON: {err.get('ctx', {}).get('error', msg)}"
    if err.get("type") == "missing":
        return f"'{param}' is required"
    return f"invalid '{param}': {msg}"


def install_error_handlers(app: FastAPI, on_reject: Callable[[int], None] | None = None) -> None:
    """Map every failure to an OpenAI-style body; pydantic's 422 becomes a 400 naming the field."""

    def error_response(exc: APIError) -> JSONResponse:
        if on_reject is not None and exc.status < 500:
            on_reject(exc.status)
        return _error_response(exc)

    @app.exception_handler(APIError)
    async def _api_error(_: Request, exc: APIError) -> JSONResponse:
        return error_response(exc)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if not errors:
            return error_response(APIError(400, "invalid request"))
        first = errors[0]
        param = field_path(tuple(first.get("loc", ())))
        if first.get("type") == "json_invalid":
            param = "body"
        return error_response(APIError(400, _validation_message(first, param), param=param))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        return error_response(APIError(exc.status_code, str(exc.detail), headers=dict(exc.headers or {})))

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        # The server must never die on input; report the fault and keep serving.
        return error_response(APIError(500, f"internal error: {type(exc).__name__}: {exc}"))
