//! The one error shape of the API: `{"error": "...", "field": "..."}` with a 4xx status
//! (or 503 for an order `--inject-fail-every` failed).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A request the server refuses; turned into a JSON answer, never a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status: 400, 404, 405, 408, 413, 422 or 431, or 503 for an injected failure
    /// (see server/README.md).
    pub status: StatusCode,
    /// What was wrong and what would be accepted.
    pub message: String,
    /// The order field at fault, `None` when the problem is not about one field.
    pub field: Option<&'static str>,
}

/// The JSON body of an error answer.
#[derive(Serialize)]
struct ErrorBody<'a> {
    /// What was wrong and what is accepted.
    error: &'a str,
    /// The field at fault; serialized as `null` when none.
    field: Option<&'a str>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: String, field: Option<&'static str>) -> Self {
        ApiError {
            status,
            message,
            field,
        }
    }

    /// The JSON body, as bytes.
    pub fn body(&self) -> Vec<u8> {
        serde_json::to_vec(&ErrorBody {
            error: &self.message,
            field: self.field,
        })
        // Serializing two strings cannot fail; the fallback keeps that promise without a panic.
        .unwrap_or_else(|_| br#"{"error":"internal error","field":null}"#.to_vec())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        json_response(self.status, self.body())
    }
}

/// A response with a JSON body and `Content-Type: application/json`.
pub fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}
