# expect: call-arg
"""Certificate families are issued by SealedProtocol.evaluate(); users cannot assemble one."""

import certify as cf


def forge(family: cf.CertificateFamily) -> cf.CertificateFamily:
    """Try to assemble a family at a higher confidence level."""
    return cf.CertificateFamily(
        certificates=family.certificates,
        confidence_level=0.99,
        family_id="mine",
        sources=(),
        protocol_name="forged",
    )
