// The geohash arithmetic: scores, decoded positions, standard geohashes and distances against
// values redis-server 7.0 printed for the same inputs; the cast of odd scores; neighbours
// (adjacency and wrapping); and the search cells, checked by brute force to cover every point
// of random circles and boxes.
#include "types/geohash.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace keywarden::geo {
namespace {

std::string text_of(const std::array<char, 11>& hash) { return std::string(hash.data(), 11); }

// Redis's addReplyHumanLongDouble text of a coordinate ("%.17Lf", trailing zeros dropped).
std::string human(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.17f", value);
  std::string out(text);
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out;
}

TEST(GeohashTest, ScoresMatchRedis) {
  // GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania; ZSCORE.
  EXPECT_EQ(score_of(13.361389, 38.115556), 3479099956230698u);
  EXPECT_EQ(score_of(15.087269, 37.502669), 3479447370796909u);
  // The storable corners: the top edge gets an index one past the grid, as in Redis.
  EXPECT_EQ(score_of(180, 85.05112878), 13510798882111488u);
  EXPECT_EQ(score_of(-180, -85.05112878), 0u);
}

TEST(GeohashTest, PositionsMatchRedis) {
  double longitude;
  double latitude;
  position_of_score(3479099956230698.0, &longitude, &latitude);
  EXPECT_EQ(human(longitude), "13.36138933897018433");
  EXPECT_EQ(human(latitude), "38.11555639549629859");
  position_of_score(3479447370796909.0, &longitude, &latitude);
  EXPECT_EQ(human(longitude), "15.08726745843887329");
  EXPECT_EQ(human(latitude), "37.50266842333162032");
  // Decoding clamps to the storable limits.
  position_of_score(13510798882111488.0, &longitude, &latitude);
  EXPECT_EQ(human(longitude), "180");
  EXPECT_EQ(human(latitude), "85.0511287799999991");
  position_of_score(0, &longitude, &latitude);
  EXPECT_EQ(human(longitude), "-179.99999731779098511");
  EXPECT_EQ(human(latitude), "-85.05112751263942528");
}

TEST(GeohashTest, OddScoresDecodeAsInRedis) {
  // ZADD weird -1 neg 1e300 big 1.5 frac inf pinf -inf ninf; GEOPOS (redis-server 7.0).
  EXPECT_EQ(bits_of_score(-1), ~uint64_t{0});
  EXPECT_EQ(bits_of_score(1e300), 0u);
  EXPECT_EQ(bits_of_score(std::numeric_limits<double>::infinity()), 0u);
  EXPECT_EQ(bits_of_score(-std::numeric_limits<double>::infinity()), uint64_t{1} << 63);
  EXPECT_EQ(bits_of_score(1.5), 1u);
  EXPECT_EQ(bits_of_score(9223372036854775808.0), uint64_t{1} << 63);
  double longitude;
  double latitude;
  position_of_score(-1, &longitude, &latitude);
  EXPECT_EQ(human(longitude), "180");
  EXPECT_EQ(human(latitude), "85.0511287799999991");
  position_of_score(-std::numeric_limits<double>::infinity(), &longitude, &latitude);
  EXPECT_EQ(human(longitude), "180");
  EXPECT_EQ(human(latitude), "-85.05112751263942528");
  position_of_score(1.5, &longitude, &latitude);
  EXPECT_EQ(human(latitude), "-85.05112497791824921");
}

TEST(GeohashTest, StandardGeohashMatchesRedis) {
  double longitude;
  double latitude;
  position_of_score(3479099956230698.0, &longitude, &latitude);
  EXPECT_EQ(text_of(standard_geohash(longitude, latitude)), "sqc8b49rny0");
  position_of_score(13510798882111488.0, &longitude, &latitude);
  EXPECT_EQ(text_of(standard_geohash(longitude, latitude)), "bp05b5048p0");
  position_of_score(0, &longitude, &latitude);
  EXPECT_EQ(text_of(standard_geohash(longitude, latitude)), "00bh0hbj200");
}

TEST(GeohashTest, DistanceMatchesRedis) {
  double lon1, lat1, lon2, lat2;
  position_of_score(3479099956230698.0, &lon1, &lat1);
  position_of_score(3479447370796909.0, &lon2, &lat2);
  char text[64];
  std::snprintf(text, sizeof(text), "%.4f", distance(lon1, lat1, lon2, lat2));
  EXPECT_STREQ(text, "166274.1516");
  EXPECT_EQ(distance(lon1, lat1, lon1, lat1), 0);
  // On one meridian, the latitude arc (Redis 7.0.15's shortcut), bit for bit.
  EXPECT_EQ(distance(lon1, 10.5, lon1, -33.25),
            kEarthRadiusMeters * std::fabs(-33.25 * (std::numbers::pi / 180.0) -
                                           10.5 * (std::numbers::pi / 180.0)));
  EXPECT_EQ(distance(lon1, 10.5, lon1, -33.25), latitude_distance(-33.25, 10.5));
  // Half a great circle.
  EXPECT_NEAR(distance(0, 0, 180, 0), std::numbers::pi * kEarthRadiusMeters, 1e-6);
}

TEST(GeohashTest, EncodeRejectsWhatCannotBeStored) {
  HashBits hash;
  EXPECT_FALSE(encode(kLongitudeRange, kLatitudeRange, 0, 85.06, kStepMax, &hash));
  EXPECT_FALSE(encode(kLongitudeRange, kLatitudeRange, 180.0001, 0, kStepMax, &hash));
  EXPECT_FALSE(encode(kLongitudeRange, kLatitudeRange, 0, 0, 0, &hash));
  EXPECT_FALSE(encode(kLongitudeRange, kLatitudeRange, 0, 0, 33, &hash));
  EXPECT_TRUE(encode(kLongitudeRange, kLatitudeRange, 0, 0, 32, &hash));
  EXPECT_TRUE(valid_coordinates(-180, -85.05112878));
  EXPECT_FALSE(valid_coordinates(-180.0000001, 0));
}

TEST(GeohashTest, EncodeDecodeRoundTripsWithinACell) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> lon(-180, 180);
  std::uniform_real_distribution<double> lat(kLatitudeMin, kLatitudeMax);
  for (int i = 0; i < 10000; ++i) {
    const double x = lon(rng);
    const double y = lat(rng);
    double dx, dy;
    position_of_score(static_cast<double>(score_of(x, y)), &dx, &dy);
    // A step-26 cell is 360/2^26 degrees wide and 170.1/2^26 high.
    EXPECT_NEAR(dx, x, 360.0 / (1 << 26));
    EXPECT_NEAR(dy, y, 171.0 / (1 << 26));
  }
}

TEST(GeohashTest, NeighboursAreAdjacentAndWrap) {
  std::mt19937_64 rng(11);
  for (uint8_t step = 1; step <= kStepMax; ++step) {
    HashBits hash;
    ASSERT_TRUE(encode(kLongitudeRange, kLatitudeRange,
                       std::uniform_real_distribution<>(-130, 130)(rng),
                       std::uniform_real_distribution<>(-60, 60)(rng), step, &hash));
    const Neighbors n = neighbors_of(hash);
    Area centre, north, south, east, west, north_east, south_west;
    ASSERT_TRUE(decode(kLongitudeRange, kLatitudeRange, hash, &centre));
    ASSERT_TRUE(decode(kLongitudeRange, kLatitudeRange, n.north, &north));
    ASSERT_TRUE(decode(kLongitudeRange, kLatitudeRange, n.south, &south));
    ASSERT_TRUE(decode(kLongitudeRange, kLatitudeRange, n.east, &east));
    ASSERT_TRUE(decode(kLongitudeRange, kLatitudeRange, n.west, &west));
    ASSERT_TRUE(decode(kLongitudeRange, kLatitudeRange, n.north_east, &north_east));
    ASSERT_TRUE(decode(kLongitudeRange, kLatitudeRange, n.south_west, &south_west));
    if (step >= 3) {  // away from the grid's edges at the random centre
      EXPECT_DOUBLE_EQ(north.latitude.min, centre.latitude.max);
      EXPECT_DOUBLE_EQ(south.latitude.max, centre.latitude.min);
      EXPECT_DOUBLE_EQ(east.longitude.min, centre.longitude.max);
      EXPECT_DOUBLE_EQ(west.longitude.max, centre.longitude.min);
      EXPECT_DOUBLE_EQ(north.longitude.min, centre.longitude.min);
      EXPECT_DOUBLE_EQ(east.latitude.min, centre.latitude.min);
      EXPECT_DOUBLE_EQ(north_east.latitude.min, centre.latitude.max);
      EXPECT_DOUBLE_EQ(north_east.longitude.min, centre.longitude.max);
      EXPECT_DOUBLE_EQ(south_west.latitude.max, centre.latitude.min);
      EXPECT_DOUBLE_EQ(south_west.longitude.max, centre.longitude.min);
    }
  }
  // The easternmost cell's east neighbour is the westernmost one.
  HashBits east_edge;
  ASSERT_TRUE(encode(kLongitudeRange, kLatitudeRange, 179.999, 10, 10, &east_edge));
  Area wrapped;
  ASSERT_TRUE(decode(kLongitudeRange, kLatitudeRange, neighbors_of(east_edge).east, &wrapped));
  EXPECT_DOUBLE_EQ(wrapped.longitude.min, -180);
}

TEST(GeohashTest, StepsShrinkWithRadiusAndTowardsThePoles) {
  EXPECT_EQ(estimate_steps_by_radius(0, 0), 26);
  EXPECT_EQ(estimate_steps_by_radius(1, 0), 24);
  EXPECT_EQ(estimate_steps_by_radius(1000, 0), 14);
  EXPECT_EQ(estimate_steps_by_radius(1000, 70), 13);
  EXPECT_EQ(estimate_steps_by_radius(1000, -81), 12);
  EXPECT_EQ(estimate_steps_by_radius(1e9, 0), 1);
}

// Every point a shape contains lies in one of its search cells' score intervals.
void expect_cells_cover(const Shape& shape, const std::vector<std::pair<double, double>>& points) {
  const std::array<HashBits, 9> cells = search_cells(shape);
  for (const auto& [x, y] : points) {
    double px, py, d;
    const uint64_t score = score_of(x, y);
    position_of_score(static_cast<double>(score), &px, &py);
    if (!shape.contains(px, py, &d)) continue;
    bool covered = false;
    for (const HashBits& cell : cells) {
      if (cell.is_zero()) continue;
      uint64_t min, max;
      score_range_of_cell(cell, &min, &max);
      if (score >= min && score < max) covered = true;
    }
    EXPECT_TRUE(covered) << "point " << x << "," << y << " around " << shape.longitude << ","
                         << shape.latitude;
  }
}

TEST(GeohashTest, SearchCellsCoverTheShape) {
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> unit(0, 1);
  for (int round = 0; round < 300; ++round) {
    Shape shape;
    shape.longitude = -180 + 360 * unit(rng);
    shape.latitude = kLatitudeMin + (kLatitudeMax - kLatitudeMin) * unit(rng);
    shape.conversion = 1000;
    const double size = std::pow(10, -2 + 5 * unit(rng));  // 10 m .. 1000 km
    if (round % 2 == 0) {
      shape.kind = Shape::Kind::kCircle;
      shape.radius = size;
    } else {
      shape.kind = Shape::Kind::kBox;
      shape.width = size * 2 * unit(rng);
      shape.height = size * 2 * unit(rng);
    }
    // Points scattered around the centre at the scale of the shape.
    const double degrees = size * 1000 / kEarthRadiusMeters * 180 / std::numbers::pi * 3;
    std::vector<std::pair<double, double>> points;
    for (int i = 0; i < 300; ++i) {
      const double x =
          shape.longitude + degrees * (2 * unit(rng) - 1) /
                                std::max(0.05, std::cos(shape.latitude * std::numbers::pi / 180));
      const double y = shape.latitude + degrees * (2 * unit(rng) - 1);
      if (valid_coordinates(x, y)) points.emplace_back(x, y);
    }
    expect_cells_cover(shape, points);
  }
}

}  // namespace
}  // namespace keywarden::geo
