# Multi-stage build of brewricd.
#   docker build -t brewric .
#   docker run --rm -p 5432:5432 -e BREWRIC_PASSWORD=change-me -v brewric-data:/var/lib/brewric brewric
#   PGPASSWORD=change-me psql -h 127.0.0.1 -p 5432 -U brewric -d brewric
# Connections reach the container from outside its loopback, so they must give
# a password: BREWRIC_PASSWORD sets the bootstrap superusers' (brewric, postgres).
# brewricd uses io_uring; container runtimes whose default seccomp profile blocks
# io_uring need `--security-opt seccomp=unconfined` (or a profile allowing
# io_uring_setup/io_uring_enter/io_uring_register).

FROM rust:1.95 AS builder
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
RUN cargo build --release --locked --bin brewricd

FROM debian:bookworm-slim
RUN useradd --system --home-dir /var/lib/brewric --shell /usr/sbin/nologin brewric \
 && mkdir -p /var/lib/brewric \
 && chown brewric:brewric /var/lib/brewric
COPY --from=builder /src/target/release/brewricd /usr/local/bin/brewricd
USER brewric
VOLUME /var/lib/brewric
EXPOSE 5432
CMD ["brewricd","--listen","0.0.0.0:5432","--data-dir","/var/lib/brewric"]
