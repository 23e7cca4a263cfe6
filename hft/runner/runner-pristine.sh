# shellcheck shell=bash
# runner-pristine.sh, sourced by install-runner.sh: the checked, root-owned copies of the
# GitHub Actions runner that every job's folder is copied from (hft-runner-loop).
#   $PRISTINE/<version>/   one unpacked release, root-owned, never written by a job
#   $PRISTINE/current      a symlink to the one new jobs copy, replaced atomically (rename)
# A tarball is unpacked only after its sha256 matched, so no job runs from an unchecked one.
# Needs from install-runner.sh: PRISTINE, DOWNLOAD_BASE, DRY_RUN, run, die.

# install_pristine VERSION SHA256: download, check, unpack into $PRISTINE/VERSION, switch.
install_pristine() {
  local version=$1 sum=$2 tarball=actions-runner-linux-x64-$1.tar.gz
  local dl=$PRISTINE/.download new=$PRISTINE/$1.new
  [[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "runner version must look like 2.329.0 (got '$version')"
  [[ $sum =~ ^[0-9a-f]{64}$ ]] || die "the sha256 of $tarball must be 64 hex digits, from https://github.com/actions/runner/releases/tag/v$version (got '$sum')"
  if [ "$DRY_RUN" = false ] && [ "$(readlink "$PRISTINE/current" 2>/dev/null)" = "$version" ]; then
    printf '  = runner %s is already the current one in %s\n' "$version" "$PRISTINE"
    return 0
  fi
  run install -d -o root -g root -m 0755 "$PRISTINE"
  run install -d -o root -g root -m 0700 "$dl"
  run curl -fsSL -o "$dl/$tarball" "$DOWNLOAD_BASE/v$version/$tarball"
  printf '  + echo "%s  %s" | sha256sum -c -\n' "$sum" "$dl/$tarball"
  if [ "$DRY_RUN" = false ] && ! echo "$sum  $dl/$tarball" | sha256sum -c - >/dev/null 2>&1; then
    rm -f "$dl/$tarball"
    die "$tarball does not match sha256 $sum: not unpacked, $PRISTINE/current unchanged; check the sum on https://github.com/actions/runner/releases/tag/v$version"
  fi
  run rm -rf "$new"
  run install -d -o root -g root -m 0755 "$new"
  run tar -xzf "$dl/$tarball" -C "$new" --no-same-owner
  run rm -f "$dl/$tarball"
  run chown -R root:root "$new"
  run chmod -R go-w "$new"
  if [ "$DRY_RUN" = false ] && [ ! -x "$new/run.sh" ]; then
    rm -rf "$new"
    die "$tarball has no run.sh at its top: not an actions/runner release for linux-x64; $PRISTINE/current unchanged"
  fi
  run rm -rf "${PRISTINE:?}/$version"
  run mv -T "$new" "$PRISTINE/$version"
  # rename(2) replaces the link in one step: a job copies either the old runner or the new.
  run ln -sfn "$version" "$PRISTINE/current.new"
  run mv -T "$PRISTINE/current.new" "$PRISTINE/current"
  printf '  = jobs from now on copy runner %s; older folders in %s can go once no job started from them runs\n' "$version" "$PRISTINE"
}
