"""Audits of callable mechanisms: development draws choose the test, reserved draws are streamed once."""
