"""Certificates for a throw-away local control plane, made with ``cryptography``.

One CA signs everything: the kube-apiserver serving certificate, and one admin client
certificate in ``system:masters`` that the admin kubeconfig and every component
(kube-controller-manager, kube-scheduler, kwok) use, and the front-proxy client certificate
the apiserver presents to aggregated API servers (without ``--requestheader-client-ca-file``
every delegated-auth component logs errors about the missing request-header CA bundle). ``system:masters`` bypasses RBAC, so the
components need no bootstrap RBAC of their own. The service-account key pair is separate: the
apiserver signs tokens with the private key and verifies them with the public one, and
kube-controller-manager uses the private key for the token controller.

Keys are ECDSA P-256 for TLS (fast to generate) and RSA-2048 for service accounts (RS256, the
algorithm every token consumer accepts). Certificates are valid from an hour ago (clock skew)
for ``days`` days.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

SERVING_DNS_NAMES = (
    "localhost",
    "kubernetes",
    "kubernetes.default",
    "kubernetes.default.svc",
    "kubernetes.default.svc.cluster.local",
)
#: 10.0.0.1 is the first address of the service range 10.0.0.0/24, the in-cluster
#: ``kubernetes`` Service's ClusterIP.
SERVING_IPS = ("127.0.0.1", "10.0.0.1")

ADMIN_USER = "kubernetes-admin"
ADMIN_GROUP = "system:masters"
#: The apiserver's identity towards aggregated API servers (``--requestheader-allowed-names``).
FRONT_PROXY_USER = "front-proxy-client"


@dataclass(frozen=True)
class CertPaths:
    """Where :meth:`ClusterCerts.write` put each PEM file."""

    ca_cert: Path
    ca_key: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    front_proxy_cert: Path
    front_proxy_key: Path
    sa_key: Path
    sa_pub: Path


@dataclass(frozen=True)
class ClusterCerts:
    """PEM bytes of every certificate and key a local control plane needs."""

    ca_cert: bytes
    ca_key: bytes
    serving_cert: bytes
    serving_key: bytes
    admin_cert: bytes
    admin_key: bytes
    front_proxy_cert: bytes
    front_proxy_key: bytes
    sa_key: bytes
    sa_pub: bytes

    def write(self, directory: Path) -> CertPaths:
        """Write the PEM files into ``directory`` (created, mode 0700; keys 0600)."""
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        paths = CertPaths(
            ca_cert=directory / "ca.crt",
            ca_key=directory / "ca.key",
            serving_cert=directory / "apiserver.crt",
            serving_key=directory / "apiserver.key",
            admin_cert=directory / "admin.crt",
            admin_key=directory / "admin.key",
            front_proxy_cert=directory / "front-proxy-client.crt",
            front_proxy_key=directory / "front-proxy-client.key",
            sa_key=directory / "sa.key",
            sa_pub=directory / "sa.pub",
        )
        for field in CertPaths.__dataclass_fields__:
            path: Path = getattr(paths, field)
            path.write_bytes(getattr(self, field))
            path.chmod(0o600 if field.endswith("key") else 0o644)
        return paths


def _ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _cert_pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _name(common_name: str, organization: str | None = None) -> x509.Name:
    attrs = []
    if organization:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    attrs.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attrs)


def _builder(subject: x509.Name, issuer: x509.Name, public_key, days: int) -> x509.CertificateBuilder:
    now = dt.datetime.now(dt.timezone.utc)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=days))
    )


def generate(
    *,
    dns_names: tuple[str, ...] = SERVING_DNS_NAMES,
    ip_addresses: tuple[str, ...] = SERVING_IPS,
    days: int = 30,
) -> ClusterCerts:
    """A fresh CA, apiserver serving cert, admin and front-proxy client certs, and the
    service-account key pair."""
    ca_key = _ec_key()
    ca_name = _name("training-conformance-ca")
    ca_cert = (
        _builder(ca_name, ca_name, ca_key.public_key(), days)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_ski = x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key())

    def leaf(subject: x509.Name, usage: list, san: x509.SubjectAlternativeName | None):
        key = _ec_key()
        builder = (
            _builder(subject, ca_name, key.public_key(), days)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True, content_commitment=False, key_encipherment=True,
                    data_encipherment=False, key_agreement=False, key_cert_sign=False,
                    crl_sign=False, encipher_only=False, decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.ExtendedKeyUsage(usage), critical=False)
            .add_extension(ca_ski, critical=False)
        )
        if san is not None:
            builder = builder.add_extension(san, critical=False)
        return key, builder.sign(ca_key, hashes.SHA256())

    san = x509.SubjectAlternativeName(
        [x509.DNSName(name) for name in dns_names]
        + [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    )
    serving_key, serving_cert = leaf(_name("kube-apiserver"), [ExtendedKeyUsageOID.SERVER_AUTH], san)
    admin_key, admin_cert = leaf(_name(ADMIN_USER, ADMIN_GROUP), [ExtendedKeyUsageOID.CLIENT_AUTH], None)
    proxy_key, proxy_cert = leaf(_name(FRONT_PROXY_USER), [ExtendedKeyUsageOID.CLIENT_AUTH], None)

    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    sa_pub = sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return ClusterCerts(
        ca_cert=_cert_pem(ca_cert),
        ca_key=_key_pem(ca_key),
        serving_cert=_cert_pem(serving_cert),
        serving_key=_key_pem(serving_key),
        admin_cert=_cert_pem(admin_cert),
        admin_key=_key_pem(admin_key),
        front_proxy_cert=_cert_pem(proxy_cert),
        front_proxy_key=_key_pem(proxy_key),
        sa_key=_key_pem(sa_key),
        sa_pub=sa_pub,
    )
