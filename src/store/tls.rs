//! TLS to the store, as libpq's `sslmode` means it ([`connector`]):
//! rustls (with ring) under tokio-postgres, no system OpenSSL.
//!
//! - `disable`: never TLS; `prefer` (the default): TLS when the server
//!   offers it; `require`: TLS or nothing. These check the server's
//!   certificate only when `sslrootcert` names a file, as libpq checks it
//!   when it has a root certificate: then as `verify-ca` does.
//! - `verify-ca`: the certificate's chain must lead to a root of
//!   `sslrootcert` (else the system's roots); its host name is not
//!   checked.
//! - `verify-full`: the chain, and the host name (or IP address) the
//!   connection was made to.
//!
//! Invariant: whatever the mode, the handshake's signatures are verified
//! with the certificate it presents (so the server holds its key); only
//! trust in the certificate is what the mode relaxes.

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::project::config::SslMode;

/// The `sslrootcert` that names the system's roots, as libpq 16 spells it.
const SYSTEM: &str = "system";

/// The connector for `mode`, with the roots of `root_cert` (a PEM file,
/// or `system`) or else the system's when it checks certificates; why
/// not, in words, when the roots cannot be read.
pub fn connector(mode: SslMode, root_cert: Option<&str>) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?;
    let checks_chain = match mode {
        SslMode::Disable => false,
        SslMode::Prefer | SslMode::Require => root_cert.is_some(),
        SslMode::VerifyCa | SslMode::VerifyFull => true,
    };
    let config = if checks_chain {
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots(root_cert)?), provider)
                .build()
                .map_err(|e| format!("the root certificates are unusable: {e}"))?;
        if mode == SslMode::VerifyFull {
            builder.with_webpki_verifier(verifier)
        } else {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(ChainOnly(verifier)))
        }
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Untrusted(provider)))
    };
    Ok(MakeRustlsConnect::new(config.with_no_client_auth()))
}

/// The roots of the PEM file `root_cert`, else the system's.
fn roots(root_cert: Option<&str>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    match root_cert.filter(|file| *file != SYSTEM) {
        Some(file) => {
            let certs = CertificateDer::pem_file_iter(Path::new(file))
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("cannot read sslrootcert {file}: {}", pem_error(&e)))?;
            let (added, _) = roots.add_parsable_certificates(certs);
            if added == 0 {
                return Err(format!("sslrootcert {file} holds no certificate"));
            }
        }
        None => {
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err(
                    "this system has no root certificates: give the server's CA as sslrootcert=FILE"
                        .into(),
                );
            }
        }
    }
    Ok(roots)
}

/// A PEM error in words (an I/O error's own words).
fn pem_error(e: &rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(io) => io.to_string(),
        other => format!("{other:?}"),
    }
}

/// Trusts any certificate (`prefer` and `require` without roots, as
/// libpq), still verifying the handshake's signatures with it.
#[derive(Debug)]
struct Untrusted(Arc<CryptoProvider>);

impl ServerCertVerifier for Untrusted {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// Checks the chain as webpki does, and forgives only a host name that
/// does not match (`verify-ca`). webpki checks the name last, once the
/// chain is trusted, so a name error means a trusted chain.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
