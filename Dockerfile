# The image deploy/kubernetes/ runs: svbench alone on a distroless, non-root
# base. Build: docker build --build-arg COMMIT=$(git rev-parse HEAD) -t ghcr.io/svbench/svbench:0.1.0 .
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# Pure Go (kube-linter, trivy and OPA included): a static binary.
ARG COMMIT=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X github.com/svbench/svbench/base/version.Commit=${COMMIT}" -o /out/svbench ./cmd/svbench

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/svbench /usr/local/bin/svbench
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/svbench"]
