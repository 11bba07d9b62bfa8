"""The one CA and serving certificate an upstream kit's webhook servers share.

Every manager serves the same certificate on 127.0.0.1 (the webhook configurations carry this CA
as their ``caBundle``). Some managers also check the certificate themselves before they serve -
the Training Operator's cert-controller rotator (``open-policy-agent/cert-controller``
``pkg/rotator``) keeps a Secret of ``ca.crt``/``ca.key``/``tls.crt``/``tls.key`` only if

* the CA certificate verifies against itself for the DNS name ``CAName`` (a SAN, since Go ignores
  the common name) and the server certificate against the CA for ``<service>.<namespace>.svc``,
  both still valid 90 days from now (its lookahead), server certificate with ``serverAuth``;
* ``ca.key`` is an RSA key in PKCS#1 PEM (``x509.ParsePKCS1PrivateKey``), or it cannot inject the
  CA into the webhook configuration and never reports ready;

otherwise it makes a CA of its own, which our webhook configurations would not trust. So the kit
asks each project for the names it checks (:attr:`Project.ca_dns_names`,
:attr:`Project.serving_dns_names`) and makes one certificate that satisfies them all.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

#: Longer than the 90-day lookahead of cert-controller's rotator.
DAYS = 365


@dataclass(frozen=True)
class Pki:
    ca_cert: bytes
    ca_key: bytes  # RSA, PKCS#1 PEM
    cert: bytes
    key: bytes


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def generate(dns_names: tuple[str, ...] = ("localhost",), ip_addresses: tuple[str, ...] = ("127.0.0.1",),
             ca_dns_names: tuple[str, ...] = (), days: int = DAYS) -> Pki:
    now = dt.datetime.now(dt.timezone.utc)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_subject = _name("training-conformance-upstream-ca")
    ca = (x509.CertificateBuilder().subject_name(ca_subject).issuer_name(ca_subject)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=days))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=True,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False))
    if ca_dns_names:
        ca = ca.add_extension(x509.SubjectAlternativeName([x509.DNSName(n) for n in ca_dns_names]), critical=False)
    ca_cert = ca.sign(ca_key, hashes.SHA256())
    key = ec.generate_private_key(ec.SECP256R1())
    san = x509.SubjectAlternativeName([x509.DNSName(n) for n in dns_names]
                                      + [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses])
    cert = (x509.CertificateBuilder().subject_name(_name("training-conformance-webhooks")).issuer_name(ca_subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=days))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .add_extension(san, critical=False)
            .sign(ca_key, hashes.SHA256()))
    return Pki(
        ca_cert=ca_cert.public_bytes(serialization.Encoding.PEM),
        ca_key=ca_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                    serialization.NoEncryption()),
        cert=cert.public_bytes(serialization.Encoding.PEM),
        key=key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()),
    )
