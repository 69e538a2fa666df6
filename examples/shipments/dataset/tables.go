package dataset

// Fixed, read-only reference tables: ports, commodities, carriers and
// companies. The exported accessors return copies.

// Port is a container port with its UN/LOCODE.
type Port struct {
	Code        string `json:"code"` // UN/LOCODE, e.g. "NLRTM"
	Name        string `json:"name"`
	CountryCode string `json:"country_code"` // ISO 3166-1 alpha-2, the first two letters of Code
	Country     string `json:"country"`
	Region      string `json:"region"` // trade region, used for transit times
}

// Trade regions.
const (
	regionEastAsia      = "east_asia"
	regionSoutheastAsia = "southeast_asia"
	regionSouthAsia     = "south_asia"
	regionMiddleEast    = "middle_east"
	regionNorthEurope   = "north_europe"
	regionMediterranean = "mediterranean"
	regionNAWest        = "north_america_west"
	regionNAEast        = "north_america_east"
	regionSAEast        = "south_america_east"
	regionSAWest        = "south_america_west"
	regionAfricaWest    = "africa_west"
	regionAfricaEast    = "africa_east"
	regionOceania       = "oceania"
)

var countries = map[string]string{
	"CN": "China", "HK": "Hong Kong", "KR": "South Korea", "JP": "Japan", "TW": "Taiwan",
	"SG": "Singapore", "MY": "Malaysia", "VN": "Vietnam", "TH": "Thailand", "ID": "Indonesia",
	"IN": "India", "LK": "Sri Lanka", "AE": "United Arab Emirates", "SA": "Saudi Arabia",
	"NL": "Netherlands", "DE": "Germany", "BE": "Belgium", "GB": "United Kingdom", "FR": "France",
	"NO": "Norway", "ES": "Spain", "IT": "Italy", "GR": "Greece", "US": "United States",
	"CA": "Canada", "MX": "Mexico", "BR": "Brazil", "AR": "Argentina", "CL": "Chile",
	"EC": "Ecuador", "CO": "Colombia", "CI": "Côte d'Ivoire", "ZA": "South Africa", "KE": "Kenya",
	"AU": "Australia", "NZ": "New Zealand",
}

var ports = []Port{
	{"CNSHA", "Shanghai", "CN", "", regionEastAsia},
	{"CNNGB", "Ningbo", "CN", "", regionEastAsia},
	{"CNSZX", "Shenzhen", "CN", "", regionEastAsia},
	{"CNTAO", "Qingdao", "CN", "", regionEastAsia},
	{"CNXMN", "Xiamen", "CN", "", regionEastAsia},
	{"HKHKG", "Hong Kong", "HK", "", regionEastAsia},
	{"KRPUS", "Busan", "KR", "", regionEastAsia},
	{"JPTYO", "Tokyo", "JP", "", regionEastAsia},
	{"JPYOK", "Yokohama", "JP", "", regionEastAsia},
	{"TWKHH", "Kaohsiung", "TW", "", regionEastAsia},
	{"SGSIN", "Singapore", "SG", "", regionSoutheastAsia},
	{"MYPKG", "Port Klang", "MY", "", regionSoutheastAsia},
	{"VNSGN", "Ho Chi Minh City", "VN", "", regionSoutheastAsia},
	{"THLCH", "Laem Chabang", "TH", "", regionSoutheastAsia},
	{"IDJKT", "Jakarta", "ID", "", regionSoutheastAsia},
	{"INNSA", "Nhava Sheva", "IN", "", regionSouthAsia},
	{"INMUN", "Mundra", "IN", "", regionSouthAsia},
	{"LKCMB", "Colombo", "LK", "", regionSouthAsia},
	{"AEJEA", "Jebel Ali", "AE", "", regionMiddleEast},
	{"SAJED", "Jeddah", "SA", "", regionMiddleEast},
	{"NLRTM", "Rotterdam", "NL", "", regionNorthEurope},
	{"DEHAM", "Hamburg", "DE", "", regionNorthEurope},
	{"DEBRV", "Bremerhaven", "DE", "", regionNorthEurope},
	{"BEANR", "Antwerp", "BE", "", regionNorthEurope},
	{"GBFXT", "Felixstowe", "GB", "", regionNorthEurope},
	{"GBSOU", "Southampton", "GB", "", regionNorthEurope},
	{"FRLEH", "Le Havre", "FR", "", regionNorthEurope},
	{"NOBGO", "Bergen", "NO", "", regionNorthEurope},
	{"ESVLC", "Valencia", "ES", "", regionMediterranean},
	{"ESALG", "Algeciras", "ES", "", regionMediterranean},
	{"ITGOA", "Genoa", "IT", "", regionMediterranean},
	{"GRPIR", "Piraeus", "GR", "", regionMediterranean},
	{"USLAX", "Los Angeles", "US", "", regionNAWest},
	{"USLGB", "Long Beach", "US", "", regionNAWest},
	{"USOAK", "Oakland", "US", "", regionNAWest},
	{"USSEA", "Seattle", "US", "", regionNAWest},
	{"CAVAN", "Vancouver", "CA", "", regionNAWest},
	{"MXZLO", "Manzanillo", "MX", "", regionNAWest},
	{"USNYC", "New York", "US", "", regionNAEast},
	{"USSAV", "Savannah", "US", "", regionNAEast},
	{"USHOU", "Houston", "US", "", regionNAEast},
	{"BRSSZ", "Santos", "BR", "", regionSAEast},
	{"ARBUE", "Buenos Aires", "AR", "", regionSAEast},
	{"CLSAI", "San Antonio", "CL", "", regionSAWest},
	{"ECGYE", "Guayaquil", "EC", "", regionSAWest},
	{"COBUN", "Buenaventura", "CO", "", regionSAWest},
	{"COCTG", "Cartagena", "CO", "", regionSAWest},
	{"CIABJ", "Abidjan", "CI", "", regionAfricaWest},
	{"ZADUR", "Durban", "ZA", "", regionAfricaEast},
	{"KEMBA", "Mombasa", "KE", "", regionAfricaEast},
	{"AUSYD", "Sydney", "AU", "", regionOceania},
	{"AUMEL", "Melbourne", "AU", "", regionOceania},
	{"NZAKL", "Auckland", "NZ", "", regionOceania},
}

// Ports returns the ports the generator uses, with country names filled in.
func Ports() []Port {
	out := make([]Port, len(ports))
	for i, p := range ports {
		p.Country = countries[p.CountryCode]
		out[i] = p
	}
	return out
}

// laneDays is the typical port-to-port transit, in days, between trade
// regions (symmetric; the generator adds -2 to +4 days).
var laneDays = map[[2]string]int{
	{regionEastAsia, regionEastAsia}:           4,
	{regionEastAsia, regionSoutheastAsia}:      7,
	{regionEastAsia, regionSouthAsia}:          14,
	{regionEastAsia, regionMiddleEast}:         18,
	{regionEastAsia, regionNorthEurope}:        35,
	{regionEastAsia, regionMediterranean}:      28,
	{regionEastAsia, regionNAWest}:             16,
	{regionEastAsia, regionNAEast}:             32,
	{regionEastAsia, regionSAEast}:             38,
	{regionEastAsia, regionSAWest}:             30,
	{regionEastAsia, regionAfricaWest}:         35,
	{regionEastAsia, regionAfricaEast}:         24,
	{regionEastAsia, regionOceania}:            14,
	{regionSoutheastAsia, regionSoutheastAsia}: 3,
	{regionSoutheastAsia, regionSouthAsia}:     7,
	{regionSoutheastAsia, regionMiddleEast}:    12,
	{regionSoutheastAsia, regionNorthEurope}:   28,
	{regionSoutheastAsia, regionMediterranean}: 22,
	{regionSoutheastAsia, regionNAWest}:        20,
	{regionSoutheastAsia, regionNAEast}:        32,
	{regionSoutheastAsia, regionSAEast}:        32,
	{regionSoutheastAsia, regionSAWest}:        32,
	{regionSoutheastAsia, regionAfricaWest}:    28,
	{regionSoutheastAsia, regionAfricaEast}:    18,
	{regionSoutheastAsia, regionOceania}:       12,
	{regionSouthAsia, regionSouthAsia}:         3,
	{regionSouthAsia, regionMiddleEast}:        5,
	{regionSouthAsia, regionNorthEurope}:       24,
	{regionSouthAsia, regionMediterranean}:     18,
	{regionSouthAsia, regionNAWest}:            30,
	{regionSouthAsia, regionNAEast}:            28,
	{regionSouthAsia, regionSAEast}:            30,
	{regionSouthAsia, regionSAWest}:            35,
	{regionSouthAsia, regionAfricaWest}:        25,
	{regionSouthAsia, regionAfricaEast}:        12,
	{regionSouthAsia, regionOceania}:           18,
	{regionMiddleEast, regionMiddleEast}:       4,
	{regionMiddleEast, regionNorthEurope}:      20,
	{regionMiddleEast, regionMediterranean}:    14,
	{regionMiddleEast, regionNAWest}:           35,
	{regionMiddleEast, regionNAEast}:           26,
	{regionMiddleEast, regionSAEast}:           28,
	{regionMiddleEast, regionSAWest}:           35,
	{regionMiddleEast, regionAfricaWest}:       22,
	{regionMiddleEast, regionAfricaEast}:       10,
	{regionMiddleEast, regionOceania}:          20,
	{regionNorthEurope, regionNorthEurope}:     3,
	{regionNorthEurope, regionMediterranean}:   7,
	{regionNorthEurope, regionNAWest}:          28,
	{regionNorthEurope, regionNAEast}:          12,
	{regionNorthEurope, regionSAEast}:          18,
	{regionNorthEurope, regionSAWest}:          22,
	{regionNorthEurope, regionAfricaWest}:      12,
	{regionNorthEurope, regionAfricaEast}:      24,
	{regionNorthEurope, regionOceania}:         40,
	{regionMediterranean, regionMediterranean}: 3,
	{regionMediterranean, regionNAWest}:        28,
	{regionMediterranean, regionNAEast}:        14,
	{regionMediterranean, regionSAEast}:        16,
	{regionMediterranean, regionSAWest}:        20,
	{regionMediterranean, regionAfricaWest}:    10,
	{regionMediterranean, regionAfricaEast}:    18,
	{regionMediterranean, regionOceania}:       34,
	{regionNAWest, regionNAWest}:               3,
	{regionNAWest, regionNAEast}:               25,
	{regionNAWest, regionSAEast}:               30,
	{regionNAWest, regionSAWest}:               14,
	{regionNAWest, regionAfricaWest}:           35,
	{regionNAWest, regionAfricaEast}:           40,
	{regionNAWest, regionOceania}:              18,
	{regionNAEast, regionNAEast}:               3,
	{regionNAEast, regionSAEast}:               16,
	{regionNAEast, regionSAWest}:               10,
	{regionNAEast, regionAfricaWest}:           18,
	{regionNAEast, regionAfricaEast}:           28,
	{regionNAEast, regionOceania}:              35,
	{regionSAEast, regionSAEast}:               3,
	{regionSAEast, regionSAWest}:               15,
	{regionSAEast, regionAfricaWest}:           14,
	{regionSAEast, regionAfricaEast}:           16,
	{regionSAEast, regionOceania}:              30,
	{regionSAWest, regionSAWest}:               5,
	{regionSAWest, regionAfricaWest}:           25,
	{regionSAWest, regionAfricaEast}:           30,
	{regionSAWest, regionOceania}:              25,
	{regionAfricaWest, regionAfricaWest}:       4,
	{regionAfricaWest, regionAfricaEast}:       18,
	{regionAfricaWest, regionOceania}:          35,
	{regionAfricaEast, regionAfricaEast}:       4,
	{regionAfricaEast, regionOceania}:          20,
	{regionOceania, regionOceania}:             4,
}

// TransitDays returns the typical port-to-port transit between two ports'
// regions, before the generator's variation; ok is false for unknown
// regions.
func TransitDays(fromRegion, toRegion string) (days int, ok bool) {
	if d, ok := laneDays[[2]string{fromRegion, toRegion}]; ok {
		return d, true
	}
	d, ok := laneDays[[2]string{toRegion, fromRegion}]
	return d, ok
}

// Commodity is a kind of goods with its HS code and how it ships.
type Commodity struct {
	HSCode        string `json:"hs_code"` // 6-digit Harmonized System subheading
	Description   string `json:"description"`
	Category      string `json:"category"`
	ContainerType string `json:"container_type"` // 20GP, 40HC or 40RF (reefer)
	// MinContainers and MaxContainers bound the containers per shipment.
	MinContainers int `json:"min_containers"`
	MaxContainers int `json:"max_containers"`
	// MinKgPerContainer and MaxKgPerContainer bound the gross weight per
	// container.
	MinKgPerContainer int `json:"min_kg_per_container"`
	MaxKgPerContainer int `json:"max_kg_per_container"`
}

var commodities = []Commodity{
	{"851713", "Smartphones", "consumer_electronics", "40HC", 1, 6, 2500, 6000},
	{"847130", "Laptop computers", "consumer_electronics", "40HC", 1, 6, 3000, 7000},
	{"852872", "LED televisions", "consumer_electronics", "40HC", 1, 8, 5000, 9000},
	{"850760", "Lithium-ion batteries", "electrical_equipment", "20GP", 1, 5, 10000, 18000},
	{"854143", "Solar panels (photovoltaic modules)", "electrical_equipment", "40HC", 2, 20, 12000, 16000},
	{"940350", "Wooden bedroom furniture", "furniture", "40HC", 1, 8, 5000, 10000},
	{"950300", "Plastic toys", "toys", "40HC", 1, 6, 4000, 9000},
	{"401110", "Passenger car tyres", "automotive", "40HC", 1, 8, 8000, 12500},
	{"870899", "Automotive spare parts", "automotive", "40HC", 1, 10, 10000, 20000},
	{"870323", "Passenger cars", "automotive", "40HC", 1, 12, 5000, 8000},
	{"841370", "Industrial centrifugal pumps", "machinery", "20GP", 1, 4, 8000, 18000},
	{"610910", "Cotton T-shirts", "apparel", "40HC", 1, 6, 5000, 10000},
	{"640411", "Sports footwear", "apparel", "40HC", 1, 5, 4000, 8000},
	{"401519", "Nitrile examination gloves", "medical_supplies", "40HC", 1, 8, 9000, 14000},
	{"300490", "Packaged medicines", "pharmaceuticals", "40RF", 1, 3, 5000, 12000},
	{"090111", "Green coffee beans", "coffee", "20GP", 1, 12, 18000, 21500},
	{"090240", "Black tea", "tea", "20GP", 1, 6, 12000, 18000},
	{"180100", "Cocoa beans", "cocoa", "20GP", 2, 15, 12000, 17500},
	{"080390", "Fresh bananas", "fruit", "40RF", 2, 20, 19000, 22500},
	{"020230", "Frozen boneless beef", "meat", "40RF", 1, 8, 24000, 27000},
	{"030617", "Frozen shrimp", "seafood", "40RF", 1, 6, 20000, 26000},
	{"030313", "Frozen Atlantic salmon", "seafood", "40RF", 1, 4, 22000, 26000},
	{"100630", "Milled white rice", "grains", "20GP", 2, 25, 24000, 26500},
	{"120190", "Soybeans", "grains", "20GP", 5, 30, 24000, 27000},
	{"071340", "Dried lentils", "grains", "20GP", 2, 20, 23000, 26500},
	{"220421", "Bottled wine", "beverages", "20GP", 1, 5, 15000, 20000},
	{"220830", "Scotch whisky", "beverages", "20GP", 1, 4, 12000, 18000},
	{"220300", "Lager beer", "beverages", "20GP", 1, 10, 18000, 21500},
	{"150920", "Extra virgin olive oil", "food_products", "20GP", 1, 6, 17000, 21000},
	{"040210", "Skimmed milk powder", "dairy", "20GP", 1, 10, 20000, 25000},
	{"390110", "Polyethylene granules", "chemicals", "40HC", 2, 20, 24000, 26500},
	{"720839", "Hot-rolled steel coils", "steel", "20GP", 2, 15, 20000, 27000},
}

// Commodities returns the goods the generator ships.
func Commodities() []Commodity { return append([]Commodity(nil), commodities...) }

// TEUPerContainer returns the twenty-foot equivalent units of a container
// type: 1 for 20-foot, 2 for 40-foot.
func TEUPerContainer(containerType string) int {
	if containerType == "20GP" {
		return 1
	}
	return 2
}

// Carrier is an ocean carrier (shipping line).
type Carrier struct {
	Name    string   `json:"name"`
	SCAC    string   `json:"scac"` // Standard Carrier Alpha Code, the bill of lading prefix
	Vessels []string `json:"vessels"`
	weight  int      // relative share of the generated shipments
}

var carriers = []Carrier{
	{"MSC", "MSCU", []string{"MSC Gülsün", "MSC Irina", "MSC Oscar", "MSC Loreto"}, 20},
	{"Maersk", "MAEU", []string{"Madrid Maersk", "Mette Maersk", "Gerda Maersk", "Maersk Essen"}, 15},
	{"CMA CGM", "CMDU", []string{"CMA CGM Jacques Saade", "CMA CGM Marco Polo", "CMA CGM Antoine de Saint Exupery"}, 13},
	{"COSCO Shipping", "COSU", []string{"COSCO Shipping Universe", "COSCO Shipping Aries"}, 11},
	{"Hapag-Lloyd", "HLCU", []string{"Berlin Express", "Hamburg Express", "Al Zubara"}, 8},
	{"ONE", "ONEY", []string{"ONE Innovation", "ONE Infinity"}, 6},
	{"Evergreen", "EGLV", []string{"Ever Ace", "Ever Given", "Ever Alot"}, 6},
	{"HMM", "HDMU", []string{"HMM Algeciras", "HMM Oslo"}, 3},
	{"Yang Ming", "YMLU", []string{"YM Warranty", "YM Wellness"}, 3},
	{"ZIM", "ZIMU", []string{"ZIM Kingston", "ZIM Mount Everest"}, 2},
}

// Carriers returns the carriers the generator assigns.
func Carriers() []Carrier {
	out := make([]Carrier, len(carriers))
	for i, c := range carriers {
		c.Vessels = append([]string(nil), c.Vessels...)
		out[i] = c
	}
	return out
}

// Company is a shipper or a consignee: where it ships from or to, and what.
type Company struct {
	Name        string   `json:"name"`
	CountryCode string   `json:"country_code"`
	Ports       []string `json:"ports"` // UN/LOCODEs in CountryCode
	// HSCodes are the goods a shipper exports; Categories the commodity
	// categories a consignee imports.
	HSCodes    []string `json:"hs_codes,omitempty"`
	Categories []string `json:"categories,omitempty"`
}

var shippers = []Company{
	{"Shenzhen Brightwave Electronics Co., Ltd.", "CN", []string{"CNSZX"}, []string{"851713", "847130", "850760"}, nil},
	{"Ningbo Oceanic Home Furnishings Co., Ltd.", "CN", []string{"CNNGB", "CNSHA"}, []string{"940350"}, nil},
	{"Shanghai Sunrise Solar Technology Co., Ltd.", "CN", []string{"CNSHA", "CNNGB"}, []string{"854143", "850760"}, nil},
	{"Qingdao Everlast Tyre Co., Ltd.", "CN", []string{"CNTAO"}, []string{"401110"}, nil},
	{"Xiamen Happy Kids Toys Co., Ltd.", "CN", []string{"CNXMN", "CNSZX"}, []string{"950300"}, nil},
	{"Jiangsu Huaxin Steel Group Co., Ltd.", "CN", []string{"CNSHA"}, []string{"720839"}, nil},
	{"Hanbit Electronics Co., Ltd.", "KR", []string{"KRPUS"}, []string{"852872", "851713"}, nil},
	{"Daesung Auto Parts Co., Ltd.", "KR", []string{"KRPUS"}, []string{"870899", "401110"}, nil},
	{"Kanto Motor Corporation", "JP", []string{"JPYOK", "JPTYO"}, []string{"870323", "870899"}, nil},
	{"Formosa Precision Computing Corp.", "TW", []string{"TWKHH"}, []string{"847130"}, nil},
	{"Saigon Highlands Coffee JSC", "VN", []string{"VNSGN"}, []string{"090111"}, nil},
	{"Mekong Seafood Export JSC", "VN", []string{"VNSGN"}, []string{"030617"}, nil},
	{"Dong Nai Garment JSC", "VN", []string{"VNSGN"}, []string{"610910", "640411"}, nil},
	{"Siam Golden Rice Co., Ltd.", "TH", []string{"THLCH"}, []string{"100630"}, nil},
	{"Selangor Glove Industries Sdn. Bhd.", "MY", []string{"MYPKG"}, []string{"401519"}, nil},
	{"PT Nusantara Footwear Indonesia", "ID", []string{"IDJKT"}, []string{"640411"}, nil},
	{"Mumbai Generic Pharma Ltd.", "IN", []string{"INNSA"}, []string{"300490"}, nil},
	{"Tiruppur Cotton Mills Pvt. Ltd.", "IN", []string{"INNSA", "INMUN"}, []string{"610910"}, nil},
	{"Gujarat Rice Exports Pvt. Ltd.", "IN", []string{"INMUN"}, []string{"100630"}, nil},
	{"Ceylon Leaf Tea Exports (Pvt) Ltd.", "LK", []string{"LKCMB"}, []string{"090240"}, nil},
	{"Gulf Polymers FZE", "AE", []string{"AEJEA"}, []string{"390110"}, nil},
	{"Arabian Petrochemical Polymers Co.", "SA", []string{"SAJED"}, []string{"390110"}, nil},
	{"Café Serra Verde Exportadora Ltda.", "BR", []string{"BRSSZ"}, []string{"090111"}, nil},
	{"Santos Agro Grãos Ltda.", "BR", []string{"BRSSZ"}, []string{"120190"}, nil},
	{"Pampas Prime Beef S.A.", "AR", []string{"ARBUE"}, []string{"020230"}, nil},
	{"Viña Los Andes S.A.", "CL", []string{"CLSAI"}, []string{"220421"}, nil},
	{"Bananera del Pacífico S.A.", "EC", []string{"ECGYE"}, []string{"080390", "030617"}, nil},
	{"Cafetera del Valle S.A.S.", "CO", []string{"COBUN", "COCTG"}, []string{"090111"}, nil},
	{"Ivoire Cacao Export SA", "CI", []string{"CIABJ"}, []string{"180100"}, nil},
	{"Cape Vineyards Export (Pty) Ltd.", "ZA", []string{"ZADUR"}, []string{"220421"}, nil},
	{"Rift Valley Tea Growers Ltd.", "KE", []string{"KEMBA"}, []string{"090240"}, nil},
	{"Rheinland Pumpen GmbH", "DE", []string{"DEHAM", "DEBRV"}, []string{"841370"}, nil},
	{"Südwerk Automobil AG", "DE", []string{"DEBRV"}, []string{"870323", "870899"}, nil},
	{"Brauerei Elbtal GmbH", "DE", []string{"DEHAM"}, []string{"220300"}, nil},
	{"Highland Spirits Distillers Ltd.", "GB", []string{"GBFXT", "GBSOU"}, []string{"220830"}, nil},
	{"Olivares de Andalucía S.L.", "ES", []string{"ESALG", "ESVLC"}, []string{"150920"}, nil},
	{"Maison Garonne Vins SAS", "FR", []string{"FRLEH"}, []string{"220421"}, nil},
	{"Oleificio Ligure S.p.A.", "IT", []string{"ITGOA"}, []string{"150920"}, nil},
	{"Scheldt Steel Trading NV", "BE", []string{"BEANR"}, []string{"720839"}, nil},
	{"Holland Dairy Ingredients B.V.", "NL", []string{"NLRTM"}, []string{"040210"}, nil},
	{"Vestland Sjømat AS", "NO", []string{"NOBGO"}, []string{"030313"}, nil},
	{"Midwest Harvest Grain LLC", "US", []string{"USSEA", "USHOU"}, []string{"120190"}, nil},
	{"Gulf Coast Polymers LLC", "US", []string{"USHOU"}, []string{"390110"}, nil},
	{"Great Lakes Auto Components Inc.", "US", []string{"USNYC", "USSAV"}, []string{"870899"}, nil},
	{"Napa Ridge Cellars Inc.", "US", []string{"USOAK"}, []string{"220421"}, nil},
	{"Prairie Pulse Exports Ltd.", "CA", []string{"CAVAN"}, []string{"071340", "120190"}, nil},
	{"Southern Cross Beef Exports Pty Ltd.", "AU", []string{"AUMEL", "AUSYD"}, []string{"020230"}, nil},
	{"Aotearoa Dairy Co-operative Ltd.", "NZ", []string{"NZAKL"}, []string{"040210"}, nil},
}

var consignees = []Company{
	{"Pacific Gadget Distributors Inc.", "US", []string{"USLAX", "USLGB"}, nil, []string{"consumer_electronics", "electrical_equipment"}},
	{"Coastal Home Furniture LLC", "US", []string{"USLGB", "USSAV"}, nil, []string{"furniture"}},
	{"BrightPath Solar Distribution LLC", "US", []string{"USLAX", "USHOU"}, nil, []string{"electrical_equipment"}},
	{"Blue Ridge Coffee Roasters Inc.", "US", []string{"USNYC", "USSAV"}, nil, []string{"coffee", "tea", "cocoa"}},
	{"Heartland Tire & Parts Wholesale Inc.", "US", []string{"USSAV", "USHOU", "USLGB"}, nil, []string{"automotive"}},
	{"Golden Gate Fine Foods Inc.", "US", []string{"USOAK", "USLAX"}, nil, []string{"seafood", "grains", "food_products", "beverages", "meat", "fruit"}},
	{"Atlantic Apparel Group Inc.", "US", []string{"USNYC", "USSAV"}, nil, []string{"apparel"}},
	{"FunWorld Toys Distribution LLC", "US", []string{"USLAX", "USLGB"}, nil, []string{"toys"}},
	{"CareWell Medical Supply Inc.", "US", []string{"USNYC", "USLAX"}, nil, []string{"medical_supplies", "pharmaceuticals"}},
	{"Texas Industrial Supply Co.", "US", []string{"USHOU"}, nil, []string{"machinery", "steel", "chemicals"}},
	{"Maple Leaf Distributors Ltd.", "CA", []string{"CAVAN"}, nil, []string{"consumer_electronics", "furniture", "coffee", "toys"}},
	{"Mexicana de Autopartes S.A. de C.V.", "MX", []string{"MXZLO"}, nil, []string{"automotive", "steel"}},
	{"Hanseatic Retail Trading GmbH", "DE", []string{"DEHAM"}, nil, []string{"consumer_electronics", "toys", "apparel"}},
	{"Nordsee Kaffee & Kakao GmbH", "DE", []string{"DEHAM", "DEBRV"}, nil, []string{"coffee", "cocoa", "tea"}},
	{"Rhein-Ruhr Energy Solutions GmbH", "DE", []string{"DEHAM"}, nil, []string{"electrical_equipment"}},
	{"Ruhr Kunststoff Verarbeitung GmbH", "DE", []string{"DEHAM"}, nil, []string{"chemicals"}},
	{"Holland Fresh Produce B.V.", "NL", []string{"NLRTM"}, nil, []string{"fruit", "seafood", "meat"}},
	{"Dutch Cocoa Processing B.V.", "NL", []string{"NLRTM"}, nil, []string{"cocoa"}},
	{"Rotterdam Agri Commodities B.V.", "NL", []string{"NLRTM"}, nil, []string{"grains"}},
	{"Benelux Auto Distribution NV", "BE", []string{"BEANR"}, nil, []string{"automotive"}},
	{"Antwerp Pharma Logistics NV", "BE", []string{"BEANR"}, nil, []string{"pharmaceuticals", "medical_supplies"}},
	{"Thames Retail Sourcing Ltd.", "GB", []string{"GBFXT", "GBSOU"}, nil, []string{"consumer_electronics", "furniture", "toys", "apparel"}},
	{"Albion Wine Merchants Ltd.", "GB", []string{"GBFXT"}, nil, []string{"beverages", "food_products"}},
	{"Northern Grocers Ltd.", "GB", []string{"GBFXT"}, nil, []string{"tea", "fruit", "seafood", "grains"}},
	{"Maison Lumière Distribution SAS", "FR", []string{"FRLEH"}, nil, []string{"consumer_electronics", "furniture", "apparel"}},
	{"Iberia Alimentación S.A.", "ES", []string{"ESVLC", "ESALG"}, nil, []string{"seafood", "coffee", "grains", "meat"}},
	{"Genova Metalli S.p.A.", "IT", []string{"ITGOA"}, nil, []string{"steel", "chemicals", "machinery"}},
	{"Athens Consumer Goods S.A.", "GR", []string{"GRPIR"}, nil, []string{"consumer_electronics", "apparel", "toys"}},
	{"Tokyo Gourmet Imports K.K.", "JP", []string{"JPTYO", "JPYOK"}, nil, []string{"meat", "beverages", "coffee", "seafood", "food_products", "dairy"}},
	{"Nihon Grain Trading K.K.", "JP", []string{"JPYOK"}, nil, []string{"grains"}},
	{"Seoul Fresh Foods Co., Ltd.", "KR", []string{"KRPUS"}, nil, []string{"meat", "beverages", "seafood", "fruit"}},
	{"Hangang Chemical Co., Ltd.", "KR", []string{"KRPUS"}, nil, []string{"chemicals"}},
	{"Shanghai Premium Foods Import Co., Ltd.", "CN", []string{"CNSHA"}, nil, []string{"beverages", "meat", "seafood", "dairy", "food_products", "fruit"}},
	{"Victoria Harbour Trading Ltd.", "HK", []string{"HKHKG"}, nil, []string{"consumer_electronics", "meat", "beverages", "seafood", "dairy"}},
	{"Huadong Grain & Oilseeds Co., Ltd.", "CN", []string{"CNTAO", "CNNGB"}, nil, []string{"grains"}},
	{"Emirates Consumer Trading LLC", "AE", []string{"AEJEA"}, nil, []string{"consumer_electronics", "grains", "tea", "automotive", "food_products"}},
	{"Arabian Auto Distributors Co.", "SA", []string{"SAJED"}, nil, []string{"automotive"}},
	{"Red Sea Foods Co.", "SA", []string{"SAJED"}, nil, []string{"meat", "grains", "dairy"}},
	{"Mumbai Industrial Supplies Pvt. Ltd.", "IN", []string{"INNSA"}, nil, []string{"machinery", "chemicals", "steel", "electrical_equipment"}},
	{"Lion City Distribution Pte. Ltd.", "SG", []string{"SGSIN"}, nil, []string{"consumer_electronics", "pharmaceuticals", "dairy", "beverages"}},
	{"Klang Valley Foods Sdn. Bhd.", "MY", []string{"MYPKG"}, nil, []string{"dairy", "grains", "meat"}},
	{"São Paulo Importadora Ltda.", "BR", []string{"BRSSZ"}, nil, []string{"consumer_electronics", "automotive", "machinery", "pharmaceuticals"}},
	{"Aussie Home & Living Pty Ltd.", "AU", []string{"AUSYD", "AUMEL"}, nil, []string{"furniture", "consumer_electronics", "toys", "apparel"}},
	{"Kiwi Trade Supplies Ltd.", "NZ", []string{"NZAKL"}, nil, []string{"automotive", "consumer_electronics", "electrical_equipment"}},
	{"Cape Town Trading (Pty) Ltd.", "ZA", []string{"ZADUR"}, nil, []string{"consumer_electronics", "automotive", "grains"}},
	{"Mombasa General Importers Ltd.", "KE", []string{"KEMBA"}, nil, []string{"grains", "pharmaceuticals", "automotive", "medical_supplies"}},
}

func cloneCompanies(cs []Company) []Company {
	out := make([]Company, len(cs))
	for i, c := range cs {
		c.Ports = append([]string(nil), c.Ports...)
		c.HSCodes = append([]string(nil), c.HSCodes...)
		c.Categories = append([]string(nil), c.Categories...)
		out[i] = c
	}
	return out
}

// Shippers returns the exporters the generator uses, with their goods.
func Shippers() []Company { return cloneCompanies(shippers) }

// Consignees returns the importers the generator uses, with the commodity
// categories they buy.
func Consignees() []Company { return cloneCompanies(consignees) }
