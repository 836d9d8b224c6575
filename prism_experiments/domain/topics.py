"""Topic vocabularies: what the synthetic corpus writes and how an interest is embedded as a query.

Each topic has its own named entities, noun phrases, actions, outcomes, groups
of people, hashtags and media descriptions, chosen so that all-MiniLM-L6-v2
embeddings of posts cluster by topic. Neighbouring topics (technology /
science / gaming, crypto / finance, health / sports / food) use deliberately
disjoint vocabularies. No phrase contains a seed-002 classifier trigger, so a
post's format comes from its template alone (tests check this).

Grammar contract for the templates: `nouns` and `outcomes` are noun phrases,
`actions` are bare verb phrases without "your" (they follow
"to", "who" and "I" as well as starting a sentence), `people` are plural
groups, `entities` are names. Media descriptions may contain `{entity}`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class TopicVocabulary:
    """The words a topic's posts are made of."""

    topic: str
    entities: tuple[str, ...]
    nouns: tuple[str, ...]
    actions: tuple[str, ...]
    outcomes: tuple[str, ...]
    people: tuple[str, ...]
    hashtags: tuple[str, ...]
    image_descriptions: tuple[str, ...]
    video_descriptions: tuple[str, ...]
    gif_descriptions: tuple[str, ...]

    def media_descriptions(self, media_type: str) -> tuple[str, ...]:
        """Description templates for `media_type` (image, video or gif)."""
        by_type = {
            "image": self.image_descriptions,
            "video": self.video_descriptions,
            "gif": self.gif_descriptions,
        }
        if media_type not in by_type:
            raise ValueError(f"media_type: must be one of image, video, gif; got {media_type!r}")
        return by_type[media_type]


_CRYPTO = TopicVocabulary(
    topic="crypto",
    entities=(
        "Bitcoin", "Ethereum", "Solana", "Coinbase", "Binance", "Uniswap", "MetaMask", "Ledger",
        "Chainlink", "Arbitrum", "Polygon", "Tether", "Dogecoin", "Cardano", "Vitalik Buterin",
        "the Lightning Network", "Kraken", "OpenSea",
    ),
    nouns=(
        "gas fees", "the Bitcoin halving", "layer-2 rollups", "self-custody", "seed phrases",
        "staking rewards", "stablecoin depegs", "NFT royalties", "memecoin mania", "on-chain volume",
        "the next altcoin season", "airdrop farming", "token unlocks", "DeFi yield farming",
        "hardware wallets", "smart contract audits", "the mempool", "crypto exchange hacks",
        "liquidity pools", "blockchain bridges",
    ),
    actions=(
        "move coins to a hardware wallet", "stamp the seed phrase into steel",
        "stake ETH with a solo validator", "bridge funds to a layer-2 rollup",
        "revoke old token approvals", "dollar-cost average into Bitcoin",
        "verify the contract on Etherscan", "run a personal Bitcoin node",
        "claim the airdrop early", "rotate out of memecoins", "set a limit order on the DEX",
        "avoid unaudited DeFi protocols", "use a burner wallet for NFT mints",
        "read the tokenomics first", "keep private keys offline",
        "provide liquidity to a stablecoin pool", "track wallets with an on-chain explorer",
    ),
    outcomes=(
        "cheaper token swaps", "zero rug pulls", "a calmer crypto bear market", "steady staking yield",
        "fewer failed blockchain transactions", "safer self-custody", "a cleaner bag of altcoins",
        "real on-chain ownership", "lower gas costs", "full control of your private keys",
        "a crypto wallet nobody can drain", "bigger airdrop allocations", "more sats stacked",
        "faster block confirmations",
    ),
    people=(
        "Bitcoin maxis", "degens", "Ethereum validators", "Bitcoin miners", "DeFi farmers",
        "NFT collectors", "crypto traders", "hodlers", "on-chain analysts", "altcoin holders",
    ),
    hashtags=(
        "#Bitcoin", "#Ethereum", "#crypto", "#DeFi", "#NFT", "#Web3", "#HODL", "#altcoins",
        "#blockchain", "#Solana",
    ),
    image_descriptions=(
        "Screenshot of a {entity} price chart with green candles",
        "Photo of a hardware wallet next to a seed phrase backup card",
        "Meme of a rocket labelled {entity} flying to the moon",
        "Dashboard of DeFi staking rewards on {entity}",
        "Photo of a Bitcoin mining rig with rows of glowing ASICs",
        "Pixel art NFT of a cartoon ape wearing a {entity} hoodie",
    ),
    video_descriptions=(
        "Screen recording of swapping tokens on {entity}",
        "Explainer video on how the Bitcoin halving cuts miner rewards",
        "Livestream clip of a crypto trader watching {entity} pump",
        "Tutorial on bridging ETH to a layer-2 rollup",
        "Documentary clip inside a Bitcoin mining farm",
    ),
    gif_descriptions=(
        "GIF of a crypto candlestick chart pumping straight up",
        "GIF of a trader yelling HODL at a falling {entity} chart",
        "GIF of a golden coin dropping into a crypto wallet",
        "GIF of the Dogecoin shiba wearing sunglasses",
        "GIF of a rug being pulled out from under a token holder",
    ),
)

_FINANCE = TopicVocabulary(
    topic="finance",
    entities=(
        "the S&P 500", "the Federal Reserve", "the Nasdaq", "Vanguard", "BlackRock", "Warren Buffett",
        "JPMorgan Chase", "Goldman Sachs", "the Dow Jones", "Berkshire Hathaway", "the US Treasury",
        "Fidelity", "Charles Schwab", "Jerome Powell", "the European Central Bank", "Morgan Stanley",
    ),
    nouns=(
        "index funds", "interest rate cuts", "Treasury bond yields", "quarterly earnings",
        "dividend stocks", "the inverted yield curve", "inflation data", "retirement accounts",
        "mortgage rates", "the monthly jobs report", "the coming recession", "credit card debt",
        "emergency savings", "stock buybacks", "the 401k employer match", "fund expense ratios",
        "corporate bonds", "the housing market", "price-to-earnings ratios", "capital gains taxes",
    ),
    actions=(
        "max out a Roth IRA", "rebalance the portfolio every quarter",
        "buy a low-cost index fund", "build a six-month emergency fund",
        "pay off high-interest credit cards", "read the earnings call transcript",
        "ladder Treasury bills", "take the full employer 401k match",
        "compare fund expense ratios", "refinance the mortgage", "automate monthly savings",
        "reinvest every dividend", "track every expense in a household budget",
        "diversify across bonds and equities", "harvest tax losses in December",
        "check the credit report once a year",
    ),
    outcomes=(
        "compound interest working for you", "a bigger retirement nest egg",
        "lower fees eating your returns", "steady dividend income", "a stronger credit score",
        "a fully funded emergency account", "a lower monthly mortgage payment",
        "less panic during a stock market correction", "tax-efficient growth",
        "a balanced stock and bond portfolio", "early retirement", "a higher net worth",
        "a smaller tax bill in April",
    ),
    people=(
        "value investors", "retail investors", "financial advisors", "hedge fund managers",
        "bond traders", "Wall Street analysts", "first-time homebuyers", "dividend investors",
        "economists", "index fund investors",
    ),
    hashtags=(
        "#investing", "#stocks", "#finance", "#personalfinance", "#WallStreet", "#StockMarket",
        "#dividends", "#retirement", "#FederalReserve", "#economy",
    ),
    image_descriptions=(
        "Chart of the S&P 500 index over the last decade",
        "Screenshot of a brokerage account showing quarterly dividend payouts",
        "Photo of the New York Stock Exchange trading floor",
        "Infographic comparing index fund expense ratios at {entity}",
        "Photo of the {entity} headquarters in Manhattan",
        "Spreadsheet of a monthly household budget and savings rate",
    ),
    video_descriptions=(
        "Clip of {entity} speaking at a press conference on interest rates",
        "Explainer video on how compound interest grows retirement savings",
        "Business news segment on quarterly earnings from {entity}",
        "Walkthrough of opening a Roth IRA with {entity}",
        "Video of the opening bell ringing at the NYSE",
    ),
    gif_descriptions=(
        "GIF of a stock ticker scrolling red and green",
        "GIF of a piggy bank filling up with coins",
        "GIF of the Fed money printer running nonstop",
        "GIF of a stockbroker slamming the desk as markets drop",
        "GIF of a calculator adding up compound interest",
    ),
)

_TECHNOLOGY = TopicVocabulary(
    topic="technology",
    entities=(
        "Apple", "Google", "Microsoft", "Nvidia", "OpenAI", "Linux", "GitHub", "AWS", "Kubernetes",
        "the iPhone", "Android", "Python", "Rust", "Intel", "Meta", "Samsung", "ChatGPT",
        "Visual Studio Code",
    ),
    nouns=(
        "large language models", "cloud computing costs", "open source software",
        "smartphone battery life", "AI coding assistants", "cybersecurity breaches",
        "software engineering interviews", "data center GPUs", "the new laptop chips", "technical debt",
        "microservices", "app store fees", "browser privacy settings", "startup funding rounds",
        "browser extensions", "USB-C chargers", "serverless functions", "password managers",
        "JavaScript frameworks", "the developer tooling ecosystem",
    ),
    actions=(
        "switch to a password manager", "learn Rust over a weekend", "self-host a private cloud server",
        "turn on two-factor authentication", "write unit tests first", "refactor that legacy codebase",
        "run a local AI model on a laptop", "containerize the app with Docker",
        "automate deploys with GitHub Actions", "uninstall unused apps",
        "back up the phone to encrypted storage", "switch to a mechanical keyboard",
        "read the changelog when updating software", "ship a side project in one weekend",
        "profile the code with a debugger", "migrate data off the legacy servers",
    ),
    outcomes=(
        "faster software builds", "zero downtime deploys", "a cleaner codebase", "fewer security alerts",
        "a lighter cloud bill", "an app that loads in under a second", "better laptop battery life",
        "fewer merge conflicts", "a smarter home network", "privacy by default", "a bug-free release",
        "more readable code", "a laptop that never overheats",
    ),
    people=(
        "software engineers", "developers", "startup founders", "product managers", "sysadmins",
        "early adopters", "open source maintainers", "hackers", "UX designers", "data engineers",
    ),
    hashtags=(
        "#tech", "#AI", "#programming", "#coding", "#opensource", "#DevOps", "#cybersecurity",
        "#startups", "#gadgets", "#software",
    ),
    image_descriptions=(
        "Screenshot of a terminal running {entity} code",
        "Photo of a new smartphone on a desk next to a laptop",
        "Diagram of a cloud architecture with servers, databases and APIs",
        "Photo of a server rack with blinking network cables",
        "Screenshot of an AI chatbot answering a coding question",
        "Photo of a mechanical keyboard and dual monitors with {entity} open",
    ),
    video_descriptions=(
        "Keynote clip of {entity} unveiling a new device",
        "Screen recording of a developer debugging a web app in {entity}",
        "Unboxing video of the latest ultralight laptop",
        "Demo of an AI assistant writing code in real time",
        "Tutorial on deploying a web app to the cloud with {entity}",
    ),
    gif_descriptions=(
        "GIF of a laptop screen showing the blue screen of death",
        "GIF of code compiling in a dark-mode editor",
        "GIF of a robot typing on a keyboard",
        "GIF of a loading spinner that never finishes",
        "GIF of a developer flipping a table after a failed build",
    ),
)

_SCIENCE = TopicVocabulary(
    topic="science",
    entities=(
        "NASA", "CERN", "the James Webb Space Telescope", "the Large Hadron Collider", "Marie Curie",
        "Albert Einstein", "the Human Genome Project", "the journal Nature", "the European Space Agency",
        "the Perseverance rover", "Carl Sagan", "the Hubble Space Telescope", "CRISPR",
        "the Higgs boson", "Jane Goodall", "Richard Feynman", "Charles Darwin",
    ),
    nouns=(
        "black holes", "dark matter", "quantum entanglement", "gene editing", "peer review",
        "exoplanets", "the fossil record", "particle physics", "the origin of life", "neutron stars",
        "evolutionary biology", "lab experiments", "the periodic table", "gravitational waves",
        "cell biology", "replication studies", "deep sea creatures", "the expanding universe",
        "organic chemistry", "the theory of relativity",
    ),
    actions=(
        "read the original paper and skip the headline", "look at Saturn through a backyard telescope",
        "visit a natural history museum", "replicate the experiment at home", "check the sample size",
        "learn the basics of statistics", "follow the preprint discussion",
        "explain the hypothesis to a kid", "join a citizen science project",
        "watch a rocket launch in person", "keep a proper lab notebook",
        "question results that look too clean", "look at pond water under a microscope",
        "map the constellations on a clear night",
    ),
    outcomes=(
        "a better grasp of the cosmos", "fewer misleading science headlines", "a real sense of wonder",
        "reproducible results", "curiosity that never switches off", "cleaner lab data",
        "a deeper respect for the scientific method", "new hypotheses worth testing",
        "a clearer view of evolution", "solid experimental evidence", "a published paper",
    ),
    people=(
        "astronomers", "physicists", "biologists", "chemists", "lab technicians", "grad students",
        "paleontologists", "geneticists", "astrophysicists", "science teachers",
    ),
    hashtags=(
        "#science", "#physics", "#astronomy", "#space", "#biology", "#chemistry", "#NASA",
        "#evolution", "#STEM", "#astrophysics",
    ),
    image_descriptions=(
        "Image from {entity} of a distant spiral galaxy",
        "Photo of a scientist pipetting samples in a biology lab",
        "Microscope image of dividing cells",
        "Photo of a dinosaur fossil skeleton in a museum hall",
        "Diagram of a particle collision inside a detector at {entity}",
        "Infrared image of a nebula full of newborn stars",
    ),
    video_descriptions=(
        "Animation of two black holes merging and sending out gravitational waves",
        "Clip of a researcher at {entity} explaining a new discovery",
        "Time-lapse of a rocket launch carrying a space telescope",
        "Lab video of a chemistry experiment changing color",
        "Documentary clip of bioluminescent deep sea creatures",
    ),
    gif_descriptions=(
        "GIF of a spinning planet with rings",
        "GIF of a DNA double helix rotating",
        "GIF of a beaker bubbling over in a chemistry lab",
        "GIF of Einstein sticking out his tongue",
        "GIF of an atom with orbiting electrons",
    ),
)

_GAMING = TopicVocabulary(
    topic="gaming",
    entities=(
        "Nintendo", "the PlayStation 5", "Xbox", "Steam", "Elden Ring", "Minecraft", "Fortnite",
        "The Legend of Zelda", "League of Legends", "Valorant", "Twitch", "Baldur's Gate 3",
        "the Nintendo Switch", "Call of Duty", "Pokemon", "Counter-Strike", "Hollow Knight",
        "Stardew Valley",
    ),
    nouns=(
        "boss fights", "speedruns", "patch notes", "loot boxes", "ranked matchmaking", "indie games",
        "open world maps", "controller drift", "Game Pass subscriptions", "esports tournaments",
        "frame rate drops", "co-op campaigns", "early access launches", "side quests", "battle passes",
        "character builds", "retro consoles", "roguelike runs", "the final boss", "multiplayer lobbies",
    ),
    actions=(
        "grind the side quests first", "play on hard mode", "stream ranked matches",
        "turn off motion blur in the graphics settings", "learn the boss attack patterns",
        "try a speedrun route", "join a co-op squad", "replay the campaign on new game plus",
        "build a custom gaming PC", "wishlist indie games on Steam",
        "practice aim in the training range", "install community mods",
        "level up the party before the final dungeon", "save the game before every boss",
    ),
    outcomes=(
        "a higher ranked tier", "smoother frame rates", "the platinum trophy", "a flawless boss kill",
        "more wins per gaming session", "a new speedrun personal best", "a loyal Twitch chat",
        "a legendary loot drop", "hundreds of hours of gameplay", "a perfect save file",
        "a full party of max-level heroes",
    ),
    people=(
        "gamers", "speedrunners", "streamers", "esports pros", "modders", "indie game devs",
        "casual players", "completionists", "Nintendo fans", "PC gamers",
    ),
    hashtags=(
        "#gaming", "#gamer", "#esports", "#videogames", "#Nintendo", "#PlayStation", "#Xbox",
        "#Twitch", "#speedrun", "#indiegames",
    ),
    image_descriptions=(
        "Screenshot of a boss fight in {entity}",
        "Photo of a glowing RGB gaming setup with a headset and controller",
        "Fan art of the main character from {entity}",
        "Screenshot of a ranked leaderboard in {entity}",
        "Photo of a retro console collection on a shelf",
        "Screenshot of a legendary loot drop in an action RPG",
    ),
    video_descriptions=(
        "Gameplay clip of a clutch win in {entity}",
        "Speedrun video breaking the world record in {entity}",
        "Trailer for the next {entity} expansion",
        "Twitch stream highlight of a streamer raging at a boss",
        "Esports grand final with a crowd cheering in the arena",
    ),
    gif_descriptions=(
        "GIF of a video game character doing a victory dance",
        "GIF of a gamer throwing a controller at the couch",
        "GIF of a pixel art hero jumping over lava",
        "GIF of a game over screen flashing",
        "GIF of Mario grabbing a power star",
    ),
)

_SPORTS = TopicVocabulary(
    topic="sports",
    entities=(
        "the NBA", "the Premier League", "the World Cup", "LeBron James", "Lionel Messi",
        "the Super Bowl", "Real Madrid", "the Lakers", "Serena Williams", "Wimbledon",
        "the Champions League", "the Olympics", "Manchester City", "Patrick Mahomes",
        "the Kansas City Chiefs", "Formula 1", "Cristiano Ronaldo", "the Boston Celtics",
    ),
    nouns=(
        "playoff seedings", "transfer rumors", "the trade deadline", "penalty shootouts",
        "referee decisions", "fantasy football lineups", "injury reports", "coaching changes",
        "home field advantage", "three-point shooting", "the offside rule", "championship rings",
        "draft picks", "the group stage", "stoppage time", "free agency", "the MVP race",
        "the league standings",
    ),
    actions=(
        "buy season tickets", "watch the full match and skip the highlights",
        "draft a rookie for the fantasy team", "go to a game at the stadium", "study the box score",
        "bench the star player", "join a pickup basketball league", "wear the lucky jersey on game day",
        "back the underdog", "stay until the final whistle", "train with the team at dawn",
        "run the full playbook in practice",
    ),
    outcomes=(
        "a championship parade", "a comeback win in overtime", "a perfect March Madness bracket",
        "a hat trick", "a clean sheet", "a walk-off home run", "bragging rights in the group chat",
        "a top seed in the playoffs", "a last-minute winning goal", "a fantasy league trophy",
        "a sold-out stadium roaring",
    ),
    people=(
        "fans", "head coaches", "referees", "season ticket holders", "fantasy managers",
        "sports journalists", "goalkeepers", "point guards", "quarterbacks", "rookies",
    ),
    hashtags=(
        "#NBA", "#football", "#soccer", "#NFL", "#PremierLeague", "#WorldCup", "#sports", "#gameday",
        "#Olympics", "#F1",
    ),
    image_descriptions=(
        "Photo of {entity} celebrating a goal in front of the crowd",
        "Photo of a packed stadium under the floodlights",
        "Scoreboard showing a last-second win for {entity}",
        "Photo of the captain lifting the trophy with teammates",
        "Graphic of the playoff bracket",
        "Photo of fans in jerseys tailgating before kickoff",
    ),
    video_descriptions=(
        "Highlight reel of {entity} from last night",
        "Clip of a buzzer-beater three-pointer",
        "Replay of a penalty shootout in {entity}",
        "Post-game press conference clip with the head coach",
        "Slow motion video of a bicycle kick goal",
    ),
    gif_descriptions=(
        "GIF of a referee showing a red card",
        "GIF of a striker celebrating with a knee slide",
        "GIF of a thunderous slam dunk",
        "GIF of fans jumping in the stands",
        "GIF of a quarterback spiking the football in the end zone",
    ),
)

_POLITICS = TopicVocabulary(
    topic="politics",
    entities=(
        "Congress", "the Senate", "the Supreme Court", "the White House", "the House of Representatives",
        "the European Parliament", "the Democratic Party", "the Republican Party", "the Prime Minister",
        "the UN Security Council", "the Electoral College", "the governor", "City Hall",
        "the British Parliament", "NATO", "the Federal Election Commission",
    ),
    nouns=(
        "voter turnout", "campaign finance", "the midterm elections", "gerrymandering", "the filibuster",
        "polling numbers", "healthcare legislation", "immigration policy", "the budget deal",
        "term limits", "ballot measures", "political polarization", "lobbying", "the debate stage",
        "swing states", "redistricting", "the primary race", "executive orders",
    ),
    actions=(
        "register to vote", "call a representative", "read the full bill text",
        "volunteer at a polling station", "show up to the town hall meeting", "fact-check the campaign ad",
        "vote in local elections", "donate to a grassroots campaign", "watch the debate live",
        "attend a city council session", "write to a senator", "check the voter registration deadline",
        "canvass the neighborhood for a candidate",
    ),
    outcomes=(
        "higher voter turnout", "a bipartisan compromise", "a fairer district map",
        "more accountable elected officials", "a budget that passes on time",
        "transparent campaign spending", "a closer race in the swing states", "a landslide victory",
        "real policy change", "stronger local democracy", "a new law on the books",
    ),
    people=(
        "voters", "senators", "lawmakers", "campaign staffers", "lobbyists", "political strategists",
        "pollsters", "activists", "constituents", "party delegates",
    ),
    hashtags=(
        "#politics", "#election", "#vote", "#Congress", "#democracy", "#policy", "#Senate",
        "#midterms", "#government", "#ballot",
    ),
    image_descriptions=(
        "Photo of {entity} in session with lawmakers debating",
        "Photo of voters lining up outside a polling place",
        "Map of swing states colored red and blue",
        "Photo of a campaign rally with signs and flags",
        "Chart of the latest polling averages for the election",
        "Photo of the Capitol dome at sunset",
    ),
    video_descriptions=(
        "Clip of the presidential debate exchange",
        "Speech from {entity} on the new bill",
        "News footage of election night results coming in",
        "Town hall video with a senator taking questions from voters",
        "Campaign ad about healthcare costs",
    ),
    gif_descriptions=(
        "GIF of a politician banging the gavel",
        "GIF of a ballot dropping into a box",
        "GIF of a candidate waving from the podium",
        "GIF of a crowd chanting at a campaign rally",
        "GIF of an election map flipping from red to blue",
    ),
)

_MUSIC = TopicVocabulary(
    topic="music",
    entities=(
        "Taylor Swift", "Beyonce", "Spotify", "the Grammys", "Kendrick Lamar", "Coachella",
        "the Beatles", "Radiohead", "Billie Eilish", "Fender", "BTS", "Glastonbury", "Pink Floyd",
        "Bad Bunny", "Daft Punk", "Bandcamp",
    ),
    nouns=(
        "vinyl records", "concert tickets", "music streaming royalties", "the new album", "guitar solos",
        "live setlists", "bedroom pop", "music festivals", "jazz standards", "chord progressions",
        "album artwork", "record labels", "drum machines", "classical symphonies", "hip hop beats",
        "sold-out tours", "the bridge of a song", "acoustic covers",
    ),
    actions=(
        "listen to the album front to back", "learn three chords on the guitar",
        "buy the vinyl at a local record store", "see the band live", "make a playlist for every mood",
        "practice scales for twenty minutes", "support artists on Bandcamp", "go to a small club gig",
        "record a demo in a bedroom studio", "sing at open mic night", "take piano lessons",
        "write a chorus every day",
    ),
    outcomes=(
        "goosebumps at the chorus", "a playlist worth sharing", "a sold-out show",
        "a song stuck in your head all week", "calluses on your fingertips", "a new favorite band",
        "a front row view of the stage", "a perfect mixtape", "a platinum record",
        "a crowd singing every word",
    ),
    people=(
        "musicians", "songwriters", "music producers", "guitarists", "DJs", "drummers", "Swifties",
        "concertgoers", "record collectors", "session players",
    ),
    hashtags=(
        "#music", "#NewMusic", "#vinyl", "#concert", "#guitar", "#hiphop", "#NowPlaying", "#livemusic",
        "#songwriting", "#playlist",
    ),
    image_descriptions=(
        "Photo of {entity} performing on stage under purple lights",
        "Photo of a vinyl record spinning on a turntable",
        "Album cover art for the new {entity} record",
        "Photo of a festival crowd in front of the main stage",
        "Photo of an electric guitar and amp in a recording studio",
        "Screenshot of a year-end streaming summary topped by {entity}",
    ),
    video_descriptions=(
        "Live performance clip of {entity} playing the encore",
        "Studio session video of a producer building a beat",
        "Music video teaser with neon visuals",
        "Fan footage from the front row of the {entity} concert",
        "Guitar lesson video on a classic riff",
    ),
    gif_descriptions=(
        "GIF of a crowd jumping at a music festival",
        "GIF of a drummer playing a fast fill",
        "GIF of headphones bouncing to the beat",
        "GIF of a DJ dropping the bass",
        "GIF of a singer hitting a high note",
    ),
)

_CLIMATE = TopicVocabulary(
    topic="climate",
    entities=(
        "the IPCC", "the Paris Agreement", "COP30", "Greta Thunberg", "the Arctic", "the Amazon rainforest",
        "the Great Barrier Reef", "Greenpeace", "the EPA", "Antarctica", "NOAA", "the Green New Deal",
        "the Gulf Stream", "the Global Carbon Project", "the Greenland ice sheet", "Climeworks",
    ),
    nouns=(
        "carbon emissions", "heat waves", "sea level rise", "wildfire smoke", "melting glaciers",
        "rooftop solar", "heat pumps", "carbon taxes", "coral bleaching", "extreme droughts",
        "renewable energy", "coal plant closures", "deforestation", "electric vehicles", "flood defenses",
        "methane leaks", "net zero targets", "climate adaptation", "carbon capture",
    ),
    actions=(
        "install rooftop solar panels", "switch to a heat pump", "take the train and skip the flight",
        "eat less red meat", "insulate the attic", "plant native trees", "compost food scraps",
        "buy a used electric car", "join a local climate group", "switch to a green energy tariff",
        "cut home energy use", "push the city for bike lanes", "vote for a carbon tax",
    ),
    outcomes=(
        "a smaller carbon footprint", "lower energy bills", "cleaner air in your city",
        "cooler streets in summer", "fewer blackouts during heat waves", "a healthier river",
        "restored wetlands", "a net zero home", "less plastic waste", "more resilient coastal towns",
        "a cooler planet for our kids",
    ),
    people=(
        "climate scientists", "environmental activists", "farmers facing drought", "COP negotiators",
        "solar installers", "conservationists", "coastal residents", "renewable energy engineers",
        "youth climate strikers", "meteorologists",
    ),
    hashtags=(
        "#climate", "#ClimateChange", "#ClimateAction", "#sustainability", "#renewables", "#netzero",
        "#solar", "#environment", "#globalwarming", "#COP30",
    ),
    image_descriptions=(
        "Photo of a glacier calving into the sea",
        "Satellite image of wildfire smoke drifting over the coast",
        "Photo of rooftop solar panels on a suburban house",
        "Chart of global temperatures rising since 1880",
        "Photo of an offshore wind farm at dawn",
        "Photo of bleached coral near {entity}",
    ),
    video_descriptions=(
        "Drone footage of flooded streets after a hurricane",
        "Time-lapse of a glacier retreating over a decade",
        "Clip of climate protesters marching with {entity} banners",
        "Explainer on how heat pumps cut home emissions",
        "Footage of a wildfire spreading across dry hills",
    ),
    gif_descriptions=(
        "GIF of the Earth melting like an ice cream cone",
        "GIF of a thermometer rising into the red",
        "GIF of wind turbines spinning on a ridge",
        "GIF of a polar bear on a shrinking ice floe",
        "GIF of the sun beating down on cracked dry farmland",
    ),
)

_HEALTH = TopicVocabulary(
    topic="health",
    entities=(
        "the WHO", "the CDC", "the Mayo Clinic", "the NHS", "Harvard Medical School", "the FDA",
        "Johns Hopkins", "the NIH", "the Cleveland Clinic", "the American Heart Association", "Pfizer",
        "Moderna", "Headspace", "the Red Cross",
    ),
    nouns=(
        "sleep quality", "blood pressure", "mental health", "gut health", "vaccine boosters",
        "chronic stress", "anxiety", "annual checkups", "cholesterol levels", "vitamin D deficiency",
        "burnout", "hydration", "flu season", "insulin resistance", "therapy sessions",
        "screen time at bedtime", "long covid", "lower back pain", "seasonal allergies",
    ),
    actions=(
        "get eight hours of sleep", "book an annual physical", "walk ten thousand steps a day",
        "drink a glass of water with breakfast", "see a therapist", "get a flu shot",
        "cut back on ultra-processed snacks", "stretch for ten minutes every morning",
        "check blood pressure at home", "take a screen break every hour",
        "meditate at bedtime", "ask the doctor for a blood panel", "schedule a dental cleaning",
    ),
    outcomes=(
        "deeper sleep", "a lower resting heart rate", "fewer sick days", "calmer mornings",
        "better cholesterol numbers", "less back pain", "steady energy all day", "a clearer head",
        "fewer migraines", "a healthier heart", "lower stress hormones",
    ),
    people=(
        "doctors", "nurses", "therapists", "patients", "pharmacists", "dietitians", "caregivers",
        "physical therapists", "ER nurses", "family physicians",
    ),
    hashtags=(
        "#health", "#wellness", "#mentalhealth", "#sleep", "#selfcare", "#healthylifestyle",
        "#publichealth", "#medicine", "#healthcare", "#wellbeing",
    ),
    image_descriptions=(
        "Photo of a doctor checking a patient's blood pressure",
        "Infographic from {entity} on healthy sleep habits",
        "Photo of a weekly pill organizer next to a glass of water",
        "Photo of a nurse preparing a vaccine shot",
        "Chart of resting heart rate from a wearable health tracker",
        "Photo of a calm therapist's office with soft light",
    ),
    video_descriptions=(
        "Clip of a doctor explaining how vaccines train the immune system",
        "Guided breathing exercise video for anxiety",
        "Physical therapist demonstrating a lower back stretch",
        "Explainer from {entity} on gut health and the microbiome",
        "Tour of a hospital emergency ward",
    ),
    gif_descriptions=(
        "GIF of a heartbeat line on a hospital monitor",
        "GIF of someone yawning in bed",
        "GIF of a person drinking a big glass of water",
        "GIF of a brain with calming waves",
        "GIF of a stethoscope swinging",
    ),
)

_FOOD = TopicVocabulary(
    topic="food",
    entities=(
        "Gordon Ramsay", "Julia Child", "the Michelin Guide", "Trader Joe's", "Le Creuset",
        "Anthony Bourdain", "Noma", "Chipotle", "In-N-Out", "Ina Garten", "Bon Appetit",
        "the farmers market", "Costco", "Samin Nosrat", "Momofuku", "Shake Shack",
    ),
    nouns=(
        "sourdough starters", "cast iron pans", "homemade ramen", "Neapolitan pizza", "street tacos",
        "brunch spots", "spice blends", "meal prep", "fermented kimchi", "smash burgers",
        "pasta from scratch", "the perfect steak sear", "soup dumplings", "chocolate chip cookies",
        "food trucks", "knife skills", "slow-cooked curry", "air fryer recipes", "garlic bread",
    ),
    actions=(
        "salt the pasta water like the sea", "preheat the cast iron for ten minutes",
        "feed the sourdough starter daily", "rest the steak after grilling",
        "toast whole spices in a dry pan", "make stock from leftover bones", "sharpen the chef's knife",
        "brown the butter for cookies", "marinate the chicken overnight", "shop at the farmers market",
        "fold the dumplings by hand", "finish the sauce with cold butter", "bake bread every Sunday",
    ),
    outcomes=(
        "a crispy golden crust", "a silky pasta sauce", "juicy tender meat",
        "a sourdough loaf with an open crumb", "a dinner everyone asks about",
        "perfectly caramelized onions", "restaurant-quality ramen at home", "a crunchy bite",
        "a fragrant curry", "zero food waste", "a kitchen that smells amazing",
    ),
    people=(
        "home cooks", "chefs", "bakers", "foodies", "line cooks", "food critics", "pastry chefs",
        "grill masters", "restaurant owners", "vegan cooks",
    ),
    hashtags=(
        "#food", "#foodie", "#cooking", "#recipe", "#baking", "#sourdough", "#homecooking", "#yum",
        "#dinner", "#streetfood",
    ),
    image_descriptions=(
        "Photo of a sourdough loaf with a crackly crust",
        "Close-up of a sizzling steak in a cast iron pan",
        "Overhead photo of a bowl of ramen with a jammy egg",
        "Photo of a pizza fresh out of a wood-fired oven",
        "Photo of a plated tasting-menu dish at {entity}",
        "Photo of a market stall piled with ripe tomatoes",
    ),
    video_descriptions=(
        "Recipe video of hand-pulled noodles",
        "Clip of {entity} plating a dish in a busy kitchen",
        "Slow motion cheese pull from a grilled sandwich",
        "Street food tour video of night market noodle stalls",
        "Tutorial on pleating soup dumplings",
    ),
    gif_descriptions=(
        "GIF of butter melting on a stack of pancakes",
        "GIF of a chef tossing noodles in a flaming wok",
        "GIF of someone taking a huge bite of a burger",
        "GIF of bread dough rising in time-lapse",
        "GIF of maple syrup pouring in slow motion",
    ),
)

_TRAVEL = TopicVocabulary(
    topic="travel",
    entities=(
        "Lisbon", "Kyoto", "Iceland", "Bali", "Patagonia", "Airbnb", "Lonely Planet", "the Amalfi Coast",
        "Machu Picchu", "Ryanair", "Delta Air Lines", "Marrakech", "the Swiss Alps", "Tokyo", "Rome",
        "New Zealand", "Santorini", "Hostelworld",
    ),
    nouns=(
        "cheap flights", "long layovers", "travel insurance", "carry-on luggage", "hostels", "jet lag",
        "road trips", "passport renewals", "airline miles", "backpacking routes", "hidden beaches",
        "overnight trains", "hotel upgrades", "airport lounges", "visa rules", "solo travel",
        "off-season trips", "packing lists", "window seats",
    ),
    actions=(
        "book flights on a Tuesday", "pack carry-on only", "buy a local SIM card at the airport",
        "travel in the shoulder season", "learn a few phrases in the local language",
        "take the night train", "stay in a family-run guesthouse", "sign up for airline miles",
        "check visa requirements early", "walk the old town at sunrise", "scan the passport to the cloud",
        "skip the tourist traps near the station", "rent a campervan for the coast road",
    ),
    outcomes=(
        "a cheaper trip", "an empty beach at sunrise", "zero lost luggage",
        "a free upgrade to business class", "a week without jet lag", "a passport full of stamps",
        "a sunset from a mountain hut", "locals inviting you to dinner", "a stress-free airport run",
        "memories from a dozen countries", "a hotel room with a sea view",
    ),
    people=(
        "backpackers", "digital nomads", "flight attendants", "tour guides", "solo travelers",
        "frequent flyers", "hostel owners", "road trippers", "travel bloggers", "expats",
    ),
    hashtags=(
        "#travel", "#wanderlust", "#traveltips", "#backpacking", "#solotravel", "#roadtrip",
        "#vacation", "#travelgram", "#explore", "#nomad",
    ),
    image_descriptions=(
        "Photo of the coastline of {entity} at golden hour",
        "Photo of a backpack and passport on a hostel bunk",
        "View from an airplane window over snowy mountains",
        "Photo of a narrow cobblestone street in {entity}",
        "Photo of a scenic train crossing a valley",
        "Map with pins marking a backpacking route through {entity}",
    ),
    video_descriptions=(
        "Drone video over the cliffs of {entity}",
        "Travel vlog of a day exploring {entity}",
        "Packing tutorial for a carry-on only trip",
        "Time-lapse of a busy airport terminal",
        "Clip of a sunrise hike to a mountain viewpoint",
    ),
    gif_descriptions=(
        "GIF of a plane taking off into the sunset",
        "GIF of a suitcase refusing to close",
        "GIF of a traveler spinning a globe",
        "GIF of waves crashing on a tropical beach",
        "GIF of a passport getting stamped at the border",
    ),
)

_ALL: tuple[TopicVocabulary, ...] = (
    _CRYPTO, _TECHNOLOGY, _POLITICS, _SPORTS, _MUSIC, _CLIMATE,
    _HEALTH, _GAMING, _FOOD, _TRAVEL, _SCIENCE, _FINANCE,
)

#: Topic ids, in a fixed order (draws are indexed by it, so do not reorder).
TOPICS: tuple[str, ...] = tuple(vocabulary.topic for vocabulary in _ALL)

#: Read-only topic id -> vocabulary.
TOPIC_VOCABULARIES: Mapping[str, TopicVocabulary] = MappingProxyType({v.topic: v for v in _ALL})


def topic_vocabulary(topic: str) -> TopicVocabulary:
    """The vocabulary of `topic`, or a ValueError listing the known topics."""
    try:
        return TOPIC_VOCABULARIES[topic]
    except KeyError:
        raise ValueError(f"topic: must be one of {', '.join(TOPICS)}; got {topic!r}") from None


def topic_description(topic: str, n_nouns: int = 8) -> str:
    """`"technology: large language models, cloud computing costs, ..."`: a topic as a query text."""
    return f"{topic}: {', '.join(topic_vocabulary(topic).nouns[:n_nouns])}"


def interest_query_text(interest: str) -> str:
    """The text embedded for an interest: a known topic's description, else the interest itself.

    A bare word embeds ambiguously: "technology" alone put 5 technology posts in its top 10 on the
    synthetic corpus (the rest science and crypto); its description puts 10 (tests/test_retrieval_topics.py).
    """
    return topic_description(interest) if interest in TOPIC_VOCABULARIES else interest
