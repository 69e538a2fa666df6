package datadir

// The pinned sources of the datasets. Every checksum was computed from the
// file at the pinned commit (git blob ids checked against the repositories'
// trees); fetching verifies it.

// Paths of the datasets' files under the data directory: the layout
// `weft data fetch` creates and every command's default expects.
const (
	// TATQADev is the TAT-QA dev split: 278 contexts, 1,668 questions.
	TATQADev = "tatqa/tatqa_dataset_dev.json"
	// ChinookSQLite is the Chinook database as a SQLite file.
	ChinookSQLite = "chinook/Chinook_Sqlite.sqlite"
	// ChinookPostgreSQL is the script that creates Chinook in PostgreSQL.
	ChinookPostgreSQL = "chinook/Chinook_PostgreSql.sql"
	// SpiderQueries is the directory of the 84 Spider questions for
	// Chinook, N.sql each ("-- question: ..." and the gold SQL).
	SpiderQueries = "spider-chinook/queries"
	// SpiderGoldJSON is the same questions as one JSON list with the
	// number of rows each gold query returns, as the project's machines
	// keep them; `weft data fetch` does not make it.
	SpiderGoldJSON = "spider-chinook/chinook_spider_gold.json"
)

const (
	tatqaSource   = "/NExTplusplus/TAT-QA/870accc41953dcde885aabeb963d94aabdc0fbc3/dataset_raw/"
	chinookSource = "/lerocha/chinook-database/7f67772503d71ba90f19283c38e93923addb43fa/ChinookDatabase/DataSources/"
	spiderSource  = "/leehe228/Spider1-Chinook-Test/f23c2e55722c5f3cf2856227572647b29468b8b4/chinook_queries/"
)

// Datasets returns the datasets `weft data fetch` knows, each with its
// files, their sources and checksums, in a new slice.
func Datasets() []Dataset {
	spider := Dataset{
		Name:        "spider",
		Description: "the Spider 1.0 questions for Chinook: 84 files with the question and the gold SQL",
		License:     "CC BY-SA 4.0 (Spider)",
		Source:      "github.com/leehe228/Spider1-Chinook-Test@f23c2e55722c5f3cf2856227572647b29468b8b4",
	}
	for _, f := range spiderFiles() {
		spider.Files = append(spider.Files, File{Path: SpiderQueries + "/" + f.name, URL: spiderSource + f.name, Size: f.size, SHA256: f.sum})
	}
	return []Dataset{
		{
			Name:        "tatqa",
			Description: "the TAT-QA dev set: 278 contexts from financial reports, 1,668 questions",
			License:     "CC BY 4.0",
			Source:      "github.com/NExTplusplus/TAT-QA@870accc41953dcde885aabeb963d94aabdc0fbc3",
			Files: []File{{Path: TATQADev, URL: tatqaSource + "tatqa_dataset_dev.json", Size: 1637431,
				SHA256: "8da095a819af6db3c14877c6df2d4d29960e41d1a63dd1fa853507bd2a616af5"}},
		},
		{
			Name:        "chinook",
			Description: "the Chinook sample database: a SQLite file and a PostgreSQL script",
			License:     "MIT",
			Source:      "github.com/lerocha/chinook-database@7f67772503d71ba90f19283c38e93923addb43fa",
			Files: []File{
				{Path: ChinookSQLite, URL: chinookSource + "Chinook_Sqlite.sqlite", Size: 1007616,
					SHA256: "7651ba378ac2fcd0dfc3c66fb101f7a7eed3ba39a612ec642b96e20702061f15"},
				{Path: ChinookPostgreSQL, URL: chinookSource + "Chinook_PostgreSql.sql", Size: 600200,
					SHA256: "e3fde5c1a5b51a2a91429a702c9ca6e69ba56e6c7f5e112724d70c3d03db695e"},
			},
		},
		spider,
	}
}

// spiderFile is one question file of the Spider set for Chinook.
type spiderFile struct {
	name string
	size int64
	sum  string
}

// spiderFiles returns the 84 question files of the Spider set for Chinook.
func spiderFiles() []spiderFile {
	return []spiderFile{
		{"0.sql", 87, "a9da7e717c558fefec7546ad5bb301e2658bb4dcce7efa35c4c695e56c8e45cf"},
		{"1.sql", 87, "3458e1cb8591e668e0bb9e8b3c69638cd215c3b104a5b0dc0db7a08c3fac1b28"},
		{"2.sql", 92, "9d273d42aa9336b130d2342f40d4e7a3d0c1560f44297438722f3e30af14b99a"},
		{"3.sql", 102, "c7a912e59f1415a8ae264be964597370c2c2d5298aafcaf7484c8eaf02ca00d8"},
		{"4.sql", 124, "516660f71bd0f4cb6479bdba6e1967b9c93867a9ed383e80a16a79464f21377b"},
		{"5.sql", 141, "a1e56a04a7ba3603c03836c9802df895276457dbd1d5a285784efb103d5e28bb"},
		{"6.sql", 184, "53f9459368f4aba46c2881b33246b8583a5c662a4aa28361bf4a4f6bc4839b87"},
		{"7.sql", 165, "c6d694876d8c28ee57b87b9d3e4ac0facd8d707a99a6ec28f45f7c8163428cf6"},
		{"8.sql", 135, "9b1374b53f81304691ec2558d63aba05bde7ed8fd85b8b5f1891c6b609c0434b"},
		{"9.sql", 133, "550147d5c4efff2abd754ed00a453b0c83ab3d1db9332b29dd5412987c2eb4bf"},
		{"10.sql", 139, "1afb3b59179a1d4da550e6241f1f2bb7c6c5154b7ee3eb2c1f0a30c4c5adfd4c"},
		{"11.sql", 148, "2d41249539911043718e105ca7a28107c918f6e93535eef98972e97f71e37450"},
		{"12.sql", 194, "377ebc07efc3907eeece3b09560d5fea588d7532160981b686671d8f4feb9586"},
		{"13.sql", 191, "90e266d84cda6138789479eb31296349af7435f4a216ac57baa932ebb1059543"},
		{"14.sql", 195, "357919db48d46978b771a200751423ab777f0cbf4fe15f5bdf7d10f298a83262"},
		{"15.sql", 198, "dadbd89043ac0495921035b700836246cc9bd92f604542c422af7f136390ce03"},
		{"16.sql", 212, "ba40ad98d9d12858bd13551195ef39da3f87308d7df31d941e1f7ae2aeba1a95"},
		{"17.sql", 221, "785eab04955a375c2d4953d95bfe7766083ef409dc7ecffd51ed878a2171acb3"},
		{"18.sql", 196, "7aa977e591c5d3f3efc822819a2a306cfb7cb20f08d1bdc1a9cbc200823515e4"},
		{"19.sql", 229, "65e1d0c8d7d4bb326e3104ea0d1dfbbb66b5950b61ef574cd95f0a80cd773702"},
		{"20.sql", 142, "b71ef24b812a82801125cec62b2bd669350997472959b0717f855db1a9a6b331"},
		{"21.sql", 148, "f8bd6ab7414a20f0a6b4e0ee447248d0770187b4d6de5a0ee4dcc15823a4703b"},
		{"22.sql", 116, "73c11008931d9d98100cc769c43d0318a2b2ea23b0be40716dd79e091ceb3d14"},
		{"23.sql", 107, "12649f0c6280b38dcbb40963f51bf0d8b6d96055f3b2d7ebddb23df92add1edc"},
		{"24.sql", 169, "c07c7b1e38e647b7615de6c1c312e546c0f30d500a8b9f0fb7f7eb69fcb9cba4"},
		{"25.sql", 156, "0ce2ff4d700794bb7ac308ed5cbbf03cbd3b0c6db7cb77d133e8831ec4e4d2bf"},
		{"26.sql", 225, "005d3bb91a970534d44175fd4697bbf29ff8fa40aeca965fdcba62f160dcf5b0"},
		{"27.sql", 243, "2c44f8938c645f7a78a2aee7fc61b2d9c372a82d86e647044e63d26023d85b5b"},
		{"28.sql", 219, "d2ec8a1d4204ddc5707577dee4fbe05c9801eb417bcd9d91c243e6920774e84d"},
		{"29.sql", 230, "57fe54ffd3965e8d1c27cbc6d876e597fec5eacb48bff3a3c0171135df7cdbc3"},
		{"30.sql", 228, "5b47baaebb5f68c8bd7e60fd00b8965fe047ba70653b7eb45064964c8b047213"},
		{"31.sql", 252, "329a45ee1d7b2be59647681866b4dd1ed874b3d14a27ab33269c635c4d047715"},
		{"32.sql", 262, "495f61bf665d0393ac5140562f447320ce6df3e383eca3ef719692c62a710265"},
		{"33.sql", 260, "ed17ab309e90a6d53fa33bbfe67c7d208ec338b8f5facb5a240d91671d3aca88"},
		{"34.sql", 175, "10a479c63b5313a08c519752f7c529c88824a1e85f4b441fc1206719426690ba"},
		{"35.sql", 197, "7092bf10190f36e31e0a9455de79e7cf98592727ade06129eb9856917cd0ef83"},
		{"36.sql", 211, "605523d495926b55708f28e4c1e505d11fb06c2677c18bd487b2c14fad2cdd56"},
		{"37.sql", 187, "749589368c13a5896f841483fcc87f4f42a3d0299902a7bc74f08a6625b25ec1"},
		{"38.sql", 207, "3af7cbf7bdd00b5e7f09434b70de065136419acb7d4aab287be9065323bba62c"},
		{"39.sql", 189, "c0c047535ea26175753e5137c4e4e855379e20b83dab089b8a9f2ec17d1673cc"},
		{"40.sql", 151, "a2df38433ac36d120a19760066ae19c5719003240dacda60522dd14744d5db7c"},
		{"41.sql", 167, "5c12a72e5f03340e13e52f094b1b57a6fc173908455aae219c77efa433a2efe2"},
		{"42.sql", 266, "c55d91d8300e9b5281764c9288bc9d9c86447071b2f4e61f3e7cc05aaf76d920"},
		{"43.sql", 257, "77325b56c2f6e4e463a3eccc9d729e27d00379baaf29731ef6a890d761f8ec5f"},
		{"44.sql", 240, "0ca252e4edd7c79575891fd423bd5109a1187a261a596f7595470fc17ccbc6f8"},
		{"45.sql", 247, "bad22da63f43ee50f045245692c857c9b81691add0274ba27ae3d015fd93f131"},
		{"46.sql", 128, "e14edf25912d112b88d13fe18734a70bad2dc15e025f8af24ed53a86867506aa"},
		{"47.sql", 135, "c9869947b4889fcfd8dec121804e1f2c81d256a342344d90c7a8f7261be15167"},
		{"48.sql", 282, "0a67ac46cd5320ceabe10451dbcc2c73c908d15c238761c130613f423e818a98"},
		{"49.sql", 281, "14daef5cf0a329d7b57a40413acdceddaa4116b931229807969210382a41d035"},
		{"50.sql", 266, "f54d70a2dc3f98a89df9a5506dad043e4372a2a83845ccb44f57665c853c550f"},
		{"51.sql", 259, "8094b544b7e8b790e7c8a43c7612a2583e6e1231b8e79c5677dc105ebad9ad6f"},
		{"52.sql", 245, "ef780b633fe8a9c2f7cf37f4ecf2a554b5e8931a4e0bd5765636d879e781053b"},
		{"53.sql", 257, "36efe3db248eec8ed303618b7bc9eae844492a6dd5dff5222d73e26407a2f36c"},
		{"54.sql", 238, "20f04d24fd5c0957b770e96a32adbfb3cd9d31217db952e53b8bd909b14916ee"},
		{"55.sql", 244, "deec0e915ad687e30b2c6d41b518d4943adc98255228f11a61c73abf9d973835"},
		{"56.sql", 101, "b9a2373c33cb1ead8991e2c2c89a4589893fba405e6e97b696ccecfc29c8c4d1"},
		{"57.sql", 106, "2d7944b2c2b022e2f4d005bd55ba35ada9901df9e2e070b52252cd6f0c0c3cff"},
		{"58.sql", 213, "1df603d09f1fa6e614a43d13ef9e3594b77cada7adda818a85e0116a6b7c28c8"},
		{"59.sql", 231, "d91e30d0899c0937124fd0c4b73b565bf645fba920535f0ff0dc99629142e591"},
		{"60.sql", 258, "3cb022e990ebcde2574e03195f11fb6e2b992a03bf0a1381bc2979b2d4ba7d93"},
		{"61.sql", 229, "e97c613fc59252f74769e8719aa8c609a5b8872e651b9ec62e97ea7c6c20a895"},
		{"62.sql", 289, "96f56ab606fa93292a262d4955178025e9512cfae0bc5d34857b87ec77c332e2"},
		{"63.sql", 287, "02fb51919f9eb1c55a66eabc3f93ea4d37fa67bd3644e94d609d6b32b40575e1"},
		{"64.sql", 253, "aa2629db43046e05f720b6db92ba7abce608d889435d97bd70d230263ddff763"},
		{"65.sql", 247, "eff8ab8ea1d37aeb3bee5dac7a3f21b9ea14a191ba8c48b0db7641e0351dd618"},
		{"66.sql", 124, "4e4689908295921c7a6e6e0d840d020d62ad9dd4e8c5bc12b21b850b625e3bef"},
		{"67.sql", 126, "db7323dac30364e15a73c1fd9ebdf18ad24b9df1d8ba81d83d9c5548ddd0f03c"},
		{"68.sql", 284, "1c2e77189937d3a59bf66a9df5da899e71a71da178c340abe35c9e8baea5e906"},
		{"69.sql", 281, "2f879101adb6735e88a3aae92b2d5bf1443ae795eb8573d5dd61ddc9c4846cb0"},
		{"70.sql", 200, "3aa6fc262487295025a148203523d500ae37bde3ab321e31952b303593352ff0"},
		{"71.sql", 209, "00eb26078b419337b9e6dccbd7614e335731b580b82005e77a4626f8a7a71e36"},
		{"72.sql", 193, "9d3a7bb31f668e8e022de8e56c7368bc31d5123b8a7d95dcdd2972f2f2036a92"},
		{"73.sql", 205, "ba693f7e566fa366b35db83cb7bc988e439787f7bc6040d53f7ecf1b2a923f19"},
		{"74.sql", 244, "43d75146c78d33311cb86bfca41e02ff65c28fd325f745e2d521272e4691fe10"},
		{"75.sql", 230, "384755a7eeefe8f0fae30fbd3ad53a3e1e90ceaf4c157251da3ea0b246fc6c51"},
		{"76.sql", 148, "270fe9a99c1145c5f009891a1dbdc08c7f03b838d504ea4f7d3da8d2ec634342"},
		{"77.sql", 172, "6f76ec5995532f40fd54bec53c8c5bfa2ff287c3c6e611bfe72e45d536383303"},
		{"78.sql", 120, "aa55afcff331bc8da3ca4c6ece6d3d224931e45cc36783ced6710a278a93d0a3"},
		{"79.sql", 113, "1f5fc4da3456b46a153c01f96ca4b177ecea87515aac8f12bbca2d1e37d659cc"},
		{"80.sql", 151, "e6a4c0b19e8680bd1f85ec491e797612e0c9e237d34d5144206b4b697bfd7ba2"},
		{"81.sql", 171, "6b3dc3534129537a1e2dbd269e48b220479d67fb112dfe069028c79f630de7af"},
		{"82.sql", 432, "cfb703c501a18f0363eebb4d2382ad8086ef620061b841b020ae847657310460"},
		{"83.sql", 427, "3f87d2b69699a68b6396763baed6bd32c65c08ad8d441c26445f1dffbfcd4083"},
	}
}
