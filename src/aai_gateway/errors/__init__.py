"""The one error tree of the gateway.

Every error carries an AAI code (see docs/errors.md for the table and where each code is
produced). Lower layers raise these; only `server/` turns them into MCP results and only
`cli/` turns them into exit codes. Every subclass of `AaiError` lives in this package
(`tests/test_error_tree.py` checks it): `base` holds the root, `requests` what was asked,
`execution` what running it met, `access` credentials and consent.
"""

from .access import (
    AuthInvalidError,
    AuthRequiredError,
    ConsentDeniedError,
    ConsentRequiredError,
    DecisionFileError,
    SecretMissingError,
    SecretStoreUnavailableError,
)
from .base import AaiError, ErrorCode, Problem, Severity, escape_pointer_token, json_pointer
from .execution import (
    AgentInactiveError,
    AnswerTooDeepError,
    AppReportedError,
    ComScriptError,
    ExecutionFailedError,
    ExecutionTimeoutError,
    FetchFailedError,
    HttpStatusError,
    NoAnswerError,
    NotImplementedExecutionError,
    ResponseTooLargeError,
    ServiceUnavailableError,
    ToolCallError,
    UnsendableRequestError,
    UnsupportedOperationError,
    UnwritableAnswerError,
)
from .requests import (
    AmbiguousAppError,
    DescriptorError,
    FeatureOffError,
    InternalError,
    InvalidArgumentError,
    InvalidParamsError,
    UnknownAppError,
    UnknownGatewayToolError,
    UnknownToolError,
    UsageError,
    WebAppNotFoundError,
)

__all__ = [
    "AaiError",
    "AgentInactiveError",
    "AmbiguousAppError",
    "AnswerTooDeepError",
    "AppReportedError",
    "AuthInvalidError",
    "AuthRequiredError",
    "ComScriptError",
    "ConsentDeniedError",
    "ConsentRequiredError",
    "DecisionFileError",
    "DescriptorError",
    "ErrorCode",
    "ExecutionFailedError",
    "ExecutionTimeoutError",
    "FeatureOffError",
    "FetchFailedError",
    "HttpStatusError",
    "InternalError",
    "InvalidArgumentError",
    "InvalidParamsError",
    "NoAnswerError",
    "NotImplementedExecutionError",
    "Problem",
    "ResponseTooLargeError",
    "SecretMissingError",
    "SecretStoreUnavailableError",
    "ServiceUnavailableError",
    "Severity",
    "ToolCallError",
    "UnknownAppError",
    "UnknownGatewayToolError",
    "UnknownToolError",
    "UnsendableRequestError",
    "UnsupportedOperationError",
    "UnwritableAnswerError",
    "UsageError",
    "WebAppNotFoundError",
    "escape_pointer_token",
    "json_pointer",
]
