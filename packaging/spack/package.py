# packaging/spack/package.py - a Spack recipe for gfsplit.
#
# gfsplit has no public repository or release tarball yet, so the recipe
# builds a checkout (README.md, "Installing"):
#
#   spack repo create ~/spack-gfsplit gfsplit
#   mkdir ~/spack-gfsplit/packages/gfsplit
#   cp packaging/spack/package.py ~/spack-gfsplit/packages/gfsplit/
#   spack repo add ~/spack-gfsplit
#   spack develop -p "$PWD" --no-clone gfsplit@=0.1.0
#   spack install gfsplit@=0.1.0 +gfarm +zstd ~verbs
#
# The gfarm package is not in Spack's builtin repository: add the Gfarm
# project's own (https://github.com/oss-tsukuba/gfarm-spack), or declare the
# system's Gfarm as an external in packages.yaml.
#
# tests/cmd/packaging.sh runs this file against a stand-in for
# spack.package and checks its variants and the configure options they give.

from spack.package import *


class Gfsplit(MakefilePackage):
    """MPI-parallel tools for the I/O of data-intensive HPC jobs on
    node-local-storage file systems (Gfarm) and any POSIX file system:
    split-write of N-1 shared files into N-N part files and back, the
    preload libraries that do it for unmodified MPI-IO programs, a
    cooperative cache, staging to and from node-local storage and a storage
    envelope benchmark."""

    version("0.1.0")

    variant("gfarm", default=True, description="Gfarm storage backend (gfarm:// paths)")
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
    # the only MPI the suite is tested with; gfsplit.pc requires mpich
    depends_on("mpich")
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
        args = ["--prefix={0}".format(self.prefix), "MPICC={0}".format(spec["mpich"].mpicc)]
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
