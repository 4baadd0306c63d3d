// Package scannercheck holds a test that runs the public scanners (kube-linter,
// trivy, svbench's OPA bundle) on every policy-pack mutation. It lives apart
// from policypack so that package's tests and fuzz targets do not link trivy.
package scannercheck
