#include "cli/train_options.hpp"

namespace p0sim::cli {

namespace {

const char* type_name(study::OptionType t) {
  switch (t) {
    case study::OptionType::integer:
      return "INT";
    case study::OptionType::real:
      return "FLOAT";
    case study::OptionType::unsigned64:
      return "UINT64";
    case study::OptionType::flag:
      return "";
    case study::OptionType::name:
      return "TEXT";
    case study::OptionType::path:
      return "PATH";
  }
  return "TEXT";
}

}  // namespace

RunOptionFlags::RunOptionFlags(CLI::App& sub, unsigned scope) {
  for (const study::RunOption& o : study::run_options()) {
    if (!(o.scope & scope)) continue;
    Flag f{&o, nullptr, std::make_shared<std::string>(), std::make_shared<bool>(false)};
    if (o.type == study::OptionType::flag) {
      f.cli = sub.add_flag("--" + o.name, *f.on, o.help);
    } else {
      std::string help = o.help;
      if (!o.unit.empty()) help += " [" + o.unit + "]";
      f.cli = sub.add_option("--" + o.name, *f.text, help)
                  ->type_name(type_name(o.type))
                  ->default_str(o.default_text)
                  ->check(CLI::Validator([&o](std::string& in) { return o.check(in); }, o.accepted()));
    }
    flags_.push_back(f);
  }
}

study::OptionValues RunOptionFlags::values(const study::OptionValues& base) const {
  study::OptionValues v = base;
  for (const Flag& f : flags_) {
    if (f.cli->count() == 0) continue;
    const std::string text = f.option->type == study::OptionType::flag ? (*f.on ? "true" : "false") : *f.text;
    v.set(f.option->name, text, "--" + f.option->name);
  }
  return v;
}

bool RunOptionFlags::given(const std::string& name) const {
  for (const Flag& f : flags_)
    if (f.option->name == name) return f.cli->count() > 0;
  return false;
}

}  // namespace p0sim::cli
