"""Sections of pages that live in modules of their own (a page calls one function to draw one)."""
