#include <Eigen/Core>
#include <boost/math/policies/error_handling.hpp>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "common/engine_version.hpp"
#include "cli/commands.hpp"
#include "common/errors.hpp"
#include "study/run_options.hpp"

namespace p0sim::cli {

std::string version_text() {
  std::string text = "p0sim " P0SIM_VERSION ", engine version " + std::to_string(kEngineVersion) + "\n";
#ifdef __clang__  // the sanitize preset's compiler (its __VERSION__ names the distribution's build)
  text += "compiler: clang++ " + std::to_string(__clang_major__) + "." + std::to_string(__clang_minor__) + "." +
          std::to_string(__clang_patchlevel__) + "\n";
#else
  text += "compiler: g++ " __VERSION__ "\n";
#endif
  text += "build: " P0SIM_BUILD_TYPE "\n";
  text += "flags: " P0SIM_CXX_FLAGS "\n";
  text += "arithmetic: " P0SIM_ARITHMETIC "\n";
  text += std::string("eigen: ") + std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) +
          "." + std::to_string(EIGEN_MINOR_VERSION) + ", SIMD: " + Eigen::SimdInstructionSetsInUse();
#ifdef P0SIM_WITH_MPI
  text += "\nmpi: enabled";
#endif
  return text;
}

int run_main(int argc, char** argv) {
  CLI::App app{"p0sim: why transformers pour their attention onto the first token"};
  app.require_subcommand(1);
  app.option_defaults()->always_capture_default();
  app.set_version_flag("--version", version_text(), "Print version, compiler, flags and Eigen SIMD sets");
  add_theory_commands(app);
  add_sim_commands(app);
  add_experiment_command(app);
  add_plot_command(app);
  add_sweep_commands(app);
  add_report_command(app);
  add_scale_p0_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    std::cerr << "p0sim: error: " << e.what() << "\n";
    return 2;
  } catch (const ConfigError& e) {
    std::cerr << "p0sim: error: " << study::option_error(e).what() << "\n";
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "p0sim: error: " << e.what() << "\n";
    return 2;
  } catch (const std::domain_error& e) {
    std::cerr << "p0sim: error: outside the model's domain: " << e.what() << "\n";
    return 2;
  } catch (const RunError& e) {
    std::cerr << "p0sim: run failed: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "p0sim: run failed: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace p0sim::cli
