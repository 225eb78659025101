// A service installs its commands, directives and INFO lines in one call, and its handlers find
// it through their context by type (commands/service.h). The service here is the example of
// docs/architecture.md, small enough to read at a glance.
#include <gtest/gtest.h>

#include <string>

#include "command_harness.h"
#include "commands/config_registry.h"
#include "commands/context.h"
#include "commands/info_text.h"
#include "commands/service.h"

namespace keywarden {
namespace {

class Greeter final : public Service {
 public:
  explicit Greeter(ServerState& state) : state_(state) { state_.services().provide<Greeter>(this); }
  ~Greeter() override { state_.services().provide<Greeter>(nullptr); }

  void install(ServiceSetup& setup) override {
    setup.commands.add(kRows);
    setup.config.add_string("greeting", &greeting_);
    setup.info.add("stats", 100, [this](InfoText& info) { info.field("greetings", count_); });
  }
  void cron(int64_t) override { ++cron_runs; }

  int cron_runs = 0;

 private:
  static void greet_command(CommandContext& ctx) {
    Greeter& greeter = ctx.service<Greeter>();
    ++greeter.count_;
    ctx.reply.bulk(greeter.greeting_);
  }
  static constexpr CommandSpec kRows[] = {
      {"greet", 1, kFast, 0, 0, 0, 0, greet_command, "server", "1.0.0", "Greets", "O(1)"}};

  ServerState& state_;
  std::string greeting_ = "hello";
  uint64_t count_ = 0;
};

TEST(ServiceTest, InstallsCommandsDirectivesAndInfoInOneCall) {
  testing::CommandHarness h;
  ConfigRegistry config;
  InfoSections info;
  Greeter greeter(h.state);
  ServiceSetup setup{h.state.commands(), config, info};
  greeter.install(setup);

  EXPECT_EQ(h.call("GREET"), "\"hello\"");
  const std::string_view change[] = {"greeting", "hi"};
  EXPECT_EQ(config.set(change), "");
  EXPECT_EQ(h.call("GREET"), "\"hi\"");

  InfoText text;
  EXPECT_TRUE(info.write("stats", text));
  EXPECT_EQ(text.text(), "greetings:2\r\n");
  EXPECT_FALSE(info.write("nosuchsection", text));

  greeter.cron(0);
  EXPECT_EQ(greeter.cron_runs, 1);
}

TEST(ServiceTest, RegistryFindsByTypeAndForgets) {
  ServiceRegistry registry;
  int number = 7;
  std::string text = "x";
  EXPECT_EQ(registry.find<int>(), nullptr);
  registry.provide<int>(&number);
  registry.provide<std::string>(&text);
  EXPECT_EQ(&registry.get<int>(), &number);
  EXPECT_EQ(&registry.get<std::string>(), &text);
  registry.provide<int>(nullptr);
  EXPECT_EQ(registry.find<int>(), nullptr);
  EXPECT_EQ(registry.find<std::string>(), &text);
}

TEST(ServiceTest, InfoWritersRunInTheirOrder) {
  InfoSections info;
  info.add("persistence", 20, [](InfoText& t) { t.field("second", 2); });
  info.add("persistence", 10, [](InfoText& t) { t.field("first", 1); });
  InfoText text;
  info.write("persistence", text);
  EXPECT_EQ(text.text(), "first:1\r\nsecond:2\r\n");
}

}  // namespace
}  // namespace keywarden
