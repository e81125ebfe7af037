//! Schemas written by hand, for documents the API answers whole whose own
//! schemas are published elsewhere: the OpenAPI document and a SARIF log.

use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;

/// An OpenAPI 3.1 document: the shape its schema requires
/// (<https://spec.openapis.org/oas/v3.1.0>).
pub(crate) struct OpenApiDocument;

impl utoipa::PartialSchema for OpenApiDocument {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some("An OpenAPI 3.1 document"))
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .property(
                "openapi",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .pattern(Some(r"^3\.1\.\d+$")),
            )
            .required("openapi")
            .property("info", ObjectBuilder::new().schema_type(Type::Object))
            .required("info")
            .property("paths", ObjectBuilder::new().schema_type(Type::Object))
            .into()
    }
}

impl utoipa::ToSchema for OpenApiDocument {}

/// A SARIF 2.1.0 log: the shape its schema requires, not the whole
/// schema (<https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html>).
pub(crate) struct SarifLog;

impl utoipa::PartialSchema for SarifLog {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "A SARIF 2.1.0 log (OASIS): one run of the tool `dupcheck`, one result per duplication, its codebase places as related locations",
            ))
            .additional_properties(Some(AdditionalProperties::FreeForm(true)))
            .property(
                "version",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(["2.1.0"])),
            )
            .required("version")
            .property(
                "$schema",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(utoipa::openapi::SchemaFormat::Custom(
                        "uri".to_owned(),
                    ))),
            )
            .property(
                "runs",
                utoipa::openapi::schema::ArrayBuilder::new().items(
                    ObjectBuilder::new()
                        .schema_type(Type::Object)
                        .property("tool", ObjectBuilder::new().schema_type(Type::Object))
                        .required("tool"),
                ),
            )
            .required("runs")
            .into()
    }
}

impl utoipa::ToSchema for SarifLog {}
