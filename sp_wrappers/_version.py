"""The package version (its own module, so that every layer can read it without importing the
package face)."""

__version__ = "0.2.0"
