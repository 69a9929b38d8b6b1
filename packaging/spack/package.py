# packaging/spack/package.py - a Spack recipe for gfsplit.
#
# The project has no public host yet: homepage, url and git below name a
# placeholder (.example is reserved), to be replaced by the real release
# location.  The tarball is what `make dist` makes (tools/make-dist.sh):
# git archive of the release commit, reproducible (fixed dates, owners,
# modes and order), without this file.  Its sha256 is recorded below: that
# of `make dist` of the commit that last changed this file, and from the
# tag v0.1.0 on, of that tag; tests/cmd/packaging.sh checks it against
# make dist, so it cannot go stale silently.  To build a checkout instead
# (README.md, "Installing"):
#
#   spack repo create ~/spack-gfsplit gfsplit
#   mkdir ~/spack-gfsplit/packages/gfsplit
#   cp packaging/spack/package.py ~/spack-gfsplit/packages/gfsplit/
#   spack repo add ~/spack-gfsplit
#   spack develop -p "$PWD" --no-clone gfsplit@=0.1.0
#   spack install gfsplit@=0.1.0 ~verbs
#
# Spack has no gfarm package: +gfarm (off by default) needs the Gfarm
# project's own repository (https://github.com/oss-tsukuba/gfarm-spack) or
# the system's Gfarm declared as an external in packages.yaml:
#
#   packages:
#     gfarm:
#       externals:
#       - spec: gfarm@2.7.20
#         prefix: /usr
#       buildable: false
#
# tests/cmd/packaging.sh runs this file against a stand-in for
# spack.package and checks its fields, variants and dependencies and the
# configure options they give.

from spack.package import *


class Gfsplit(MakefilePackage):
    """MPI-parallel tools for the I/O of data-intensive HPC jobs on
    node-local-storage file systems (Gfarm) and any POSIX file system:
    split-write of N-1 shared files into N-N part files and back, the
    preload libraries that do it for unmodified MPI-IO programs, a
    cooperative cache, staging to and from node-local storage and a storage
    envelope benchmark."""

    homepage = "https://a-seed-02f75321.example/gfsplit"
    url = "https://a-seed-02f75321.example/gfsplit/releases/gfsplit-0.1.0.tar.gz"
    git = "https://a-seed-02f75321.example/gfsplit.git"

    version("develop", branch="main")
    version("0.1.0", sha256="2cbeb0d222120bce0ddda2e654f36ff7c3e244a159fd67e6efd4990585aae0e5")

    # no gfarm package in Spack's builtin repository (see above)
    variant("gfarm", default=False, description="Gfarm storage backend (gfarm:// paths)")
    variant("zstd", default=True, description="zstd compression of staged data")
    variant(
        "verbs",
        default=False,
        description="libibverbs RDMA transport for the cooperative cache "
        "(MPI-3 one-sided RMA is always there)",
    )
    variant("fuse", default=True, description="gfsplit-mount, split files as files (FUSE 3)")

    depends_on("gmake", type="build")
    depends_on("pkgconfig", type="build")
    # the site's MPI, whichever: the preload libraries must be built with
    # the MPI the applications use (MPI-3.1 or later; built with MPICH 4.0
    # and Open MPI 4.1; gfsplit.pc requires that MPI's pkg-config module)
    depends_on("mpi@3.1:")
    depends_on("json-c")
    depends_on("xxhash")
    depends_on("gfarm", when="+gfarm")
    depends_on("zstd", when="+zstd")
    depends_on("rdma-core", when="+verbs")
    depends_on("libfuse@3:", when="+fuse")

    # make programs: the libraries and commands, not the tests
    build_targets = ["programs"]

    def configure_args(self):
        spec = self.spec
        args = ["--prefix={0}".format(self.prefix), "MPICC={0}".format(spec["mpi"].mpicc)]
        # a variant that is on makes a missing library an error instead of
        # a smaller build; Gfarm is found under its own prefix
        if spec.satisfies("+gfarm"):
            args.append("--with-gfarm={0}".format(spec["gfarm"].prefix))
        else:
            args.append("--without-gfarm")
        # configure's name for each of the other variants
        for variant, name in (("zstd", "zstd"), ("verbs", "ibverbs"), ("fuse", "fuse")):
            if spec.satisfies("+" + variant):
                args.append("--with-{0}".format(name))
            else:
                args.append("--without-{0}".format(name))
        args.append("--without-fuzz")
        return args

    def edit(self, spec, prefix):
        # configure is hand-written, not autoconf: it writes config.mk
        configure = Executable("./configure")
        configure(*self.configure_args())
