//! JWT client assertions (RFC 7523 section 2.2) for `private_key_jwt`: the client proves who it
//! is to the token endpoint with a short-lived JWT signed by its private key (a PKCS#8 PEM),
//! `iss` and `sub` its client id, `aud` the authorization server's issuer.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// The algorithms an assertion is signed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Algorithm {
    /// ECDSA on P-256 with SHA-256.
    Es256,
    /// ECDSA on P-384 with SHA-384.
    Es384,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
}

impl Algorithm {
    /// The algorithm named `name` (`ES256`, `ES384`, `RS256`).
    pub(crate) fn parse(name: &str) -> Result<Self, String> {
        match name.to_ascii_uppercase().as_str() {
            "ES256" => Ok(Self::Es256),
            "ES384" => Ok(Self::Es384),
            "RS256" => Ok(Self::Rs256),
            _ => Err(format!(
                "signing_algorithm {name:?} is not one of ES256, ES384, RS256"
            )),
        }
    }

    /// Its JOSE name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Es256 => "ES256",
            Self::Es384 => "ES384",
            Self::Rs256 => "RS256",
        }
    }
}

/// A private key read from PEM, checked once.
pub(crate) struct SigningKey {
    der: Vec<u8>,
    algorithm: Algorithm,
}

impl SigningKey {
    /// The PKCS#8 key in `pem` (`-----BEGIN PRIVATE KEY-----`) for `algorithm`.
    pub(crate) fn from_pem(pem: &str, algorithm: Algorithm) -> Result<Self, String> {
        if pem.contains("BEGIN EC PRIVATE KEY") || pem.contains("BEGIN RSA PRIVATE KEY") {
            return Err(
                "the private key must be PKCS#8 (BEGIN PRIVATE KEY); convert it with \
                 `openssl pkcs8 -topk8 -nocrypt -in KEY`"
                    .into(),
            );
        }
        let body: String = pem
            .lines()
            .map(str::trim)
            .skip_while(|line| *line != "-----BEGIN PRIVATE KEY-----")
            .skip(1)
            .take_while(|line| *line != "-----END PRIVATE KEY-----")
            .collect();
        if body.is_empty() {
            return Err("no PKCS#8 private key (BEGIN PRIVATE KEY) in the PEM text".into());
        }
        let der = STANDARD
            .decode(body)
            .map_err(|error| format!("the private key is not valid base64: {error}"))?;
        let key = Self { der, algorithm };
        // Refuse a key that cannot sign now, not at the first token request.
        key.sign(b"check")?;
        Ok(key)
    }

    /// The algorithm it signs with.
    pub(crate) fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// A fresh assertion for `client_id` addressed to `audience`.
    pub(crate) fn assertion(&self, client_id: &str, audience: &str) -> Result<String, String> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |elapsed| elapsed.as_secs());
        let mut id = [0_u8; 16];
        SystemRandom::new()
            .fill(&mut id)
            .map_err(|_| "no randomness for the assertion id".to_owned())?;
        let header = serde_json::json!({"alg": self.algorithm.name(), "typ": "JWT"});
        let claims = serde_json::json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + LIFETIME_SECS,
            "jti": URL_SAFE_NO_PAD.encode(id),
        });
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self.sign(input.as_bytes())?;
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }

    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        let random = SystemRandom::new();
        let unusable = |error: ring::error::KeyRejected| {
            format!(
                "the private key cannot sign {}: {error}",
                self.algorithm.name()
            )
        };
        let failed = |_| "signing the assertion failed".to_owned();
        let ecdsa = |algorithm| {
            let pair = EcdsaKeyPair::from_pkcs8(algorithm, &self.der, &random).map_err(unusable)?;
            let signed = pair.sign(&random, message).map_err(failed)?;
            Ok(signed.as_ref().to_vec())
        };
        match self.algorithm {
            Algorithm::Es256 => ecdsa(&signature::ECDSA_P256_SHA256_FIXED_SIGNING),
            Algorithm::Es384 => ecdsa(&signature::ECDSA_P384_SHA384_FIXED_SIGNING),
            Algorithm::Rs256 => {
                let pair = RsaKeyPair::from_pkcs8(&self.der).map_err(unusable)?;
                let mut signed = vec![0; pair.public().modulus_len()];
                pair.sign(&signature::RSA_PKCS1_SHA256, &random, message, &mut signed)
                    .map_err(failed)?;
                Ok(signed)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::KeyPair;

    fn es256_pem() -> (String, Vec<u8>) {
        let random = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &random)
                .unwrap();
        let pair = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8.as_ref(),
            &random,
        )
        .unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(pkcs8.as_ref())
        );
        (pem, pair.public_key().as_ref().to_vec())
    }

    #[test]
    fn an_assertion_verifies_with_the_public_key_and_names_the_client() {
        let (pem, public) = es256_pem();
        let key = SigningKey::from_pem(&pem, Algorithm::Es256).unwrap();
        let jwt = key.assertion("client-1", "https://auth.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let signed = format!("{}.{}", parts[0], parts[1]);
        signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, public)
            .verify(
                signed.as_bytes(),
                &URL_SAFE_NO_PAD.decode(parts[2]).unwrap(),
            )
            .unwrap();
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "client-1");
        assert_eq!(claims["sub"], "client-1");
        assert_eq!(claims["aud"], "https://auth.example");
        assert_eq!(
            claims["exp"].as_u64().unwrap() - claims["iat"].as_u64().unwrap(),
            LIFETIME_SECS
        );
        let again = key.assertion("client-1", "https://auth.example").unwrap();
        let claims_again: serde_json::Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(again.split('.').nth(1).unwrap())
                .unwrap(),
        )
        .unwrap();
        assert_ne!(claims["jti"], claims_again["jti"], "each assertion is new");
    }

    #[test]
    fn keys_that_cannot_sign_are_refused_with_the_reason() {
        let (pem, _) = es256_pem();
        for (pem, algorithm, needle) in [
            (pem.as_str(), Algorithm::Rs256, "cannot sign RS256"),
            (pem.as_str(), Algorithm::Es384, "cannot sign ES384"),
            (
                "-----BEGIN EC PRIVATE KEY-----\nAAAA\n",
                Algorithm::Es256,
                "PKCS#8",
            ),
            ("not a key", Algorithm::Es256, "no PKCS#8"),
            (
                "-----BEGIN PRIVATE KEY-----\n!!\n-----END PRIVATE KEY-----",
                Algorithm::Es256,
                "base64",
            ),
        ] {
            let error = SigningKey::from_pem(pem, algorithm).err().unwrap();
            assert!(error.contains(needle), "{error}");
        }
        assert!(Algorithm::parse("HS256").is_err());
        assert_eq!(Algorithm::parse("es256"), Ok(Algorithm::Es256));
    }
}
